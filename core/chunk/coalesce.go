package chunk

import (
	"strings"
	"time"
	"unicode"
)

// Coalescing defaults (OpenClaw's block streaming: DEFAULT_BLOCK_STREAM_MIN/MAX and the
// 1 s coalesce idle).
const (
	DefaultCoalesceMin  = 800
	DefaultCoalesceMax  = 1200
	DefaultCoalesceIdle = time.Second
)

// CoalesceConfig shapes the blocks a Coalescer delivers. Lengths count characters (runes).
type CoalesceConfig struct {
	// MinChars: a block is not delivered before it has this many characters, except on an
	// idle flush and at the end of the turn. Default 800.
	MinChars int
	// MaxChars: no block is longer. Default 1200.
	MaxChars int
	// Idle: buffered text is delivered when nothing was added for this long. Default 1s.
	Idle time.Duration
	// Joined: the blocks are shown joined in one message (a live draft edited in place),
	// so code fences are neither closed and reopened at cuts nor waited for.
	Joined bool
}

func (c CoalesceConfig) withDefaults() CoalesceConfig {
	if c.MaxChars <= 0 {
		c.MaxChars = DefaultCoalesceMax
	}
	if c.MinChars <= 0 {
		c.MinChars = DefaultCoalesceMin
	}
	if c.MinChars > c.MaxChars {
		c.MinChars = c.MaxChars
	}
	if c.Idle <= 0 {
		c.Idle = DefaultCoalesceIdle
	}
	return c
}

// Coalescer turns a turn's streamed assistant text into chat-sized blocks. It is pure: no
// goroutines or timers; time comes from the injected clock, and the caller calls Poll at
// Deadline.
//
// Cutting: while at least MinChars are buffered, the text up to the last paragraph break
// ("\n\n") between MinChars and MaxChars is delivered. Beyond MaxChars without such a
// break, the cut is the last newline, else sentence end, else space in [MinChars,
// MaxChars], else a hard cut at MaxChars. Whitespace at a cut is dropped; nothing is
// delivered twice. Text blocks from different assistant messages are joined with "\n\n".
//
// Code fences: every block is sent as a message of its own, so a block never ends inside
// a fenced code block (``` or ~~~, CommonMark's rules). When the cut would fall inside
// one, the block ends after the code block if that fits in MaxChars, else before it when
// text precedes it; a code block still being written is waited for (an idle flush keeps
// it back, and Deadline reports nothing due until more text arrives). Only a code block
// longer than MaxChars is split: the block ends at a line end inside it with the fence's
// close line added, and the next block starts with the fence's open line (same info
// string; the bare marker when the open line is too long), both counted in MaxChars. A
// reply that ends inside a code block gets its close line. Removing the added close and
// reopen lines and the whitespace at cuts gives back the streamed text.
//
// Reconciling with the final result (Finish): claude's result text is the last assistant
// message's text. With S the streamed blocks joined by "\n\n" and F the result (both
// trimmed): if F is empty or S ends with F (F is S, or F is the last block), only the
// buffered remainder is delivered; if F starts with S (or with the last block), the
// unseen tail of F is delivered after the buffer; otherwise (the stream diverged, e.g.
// claude retried non-streaming after a mid-stream error) the buffer is delivered and then
// F in full, and Finish reports diverged.
type Coalescer struct {
	cfg CoalesceConfig
	now func() time.Time

	buf       []rune
	lastAdd   time.Time
	joinNext  bool
	blocks    []string
	cur       strings.Builder
	sawDeltas bool
	// carry is the code block the last block closed; the buffer starts
	// inside it and the next block reopens it.
	carry *fence[rune]
	// held: an idle flush kept back a code block still being written;
	// no deadline until more text arrives.
	held bool
	// record, when set (tests), is told how each block was built (empty
	// blocks, which are not delivered, included).
	record func(block string, reopened, closed bool)
}

// NewCoalescer returns a Coalescer; now is its clock (time.Now when nil).
func NewCoalescer(cfg CoalesceConfig, now func() time.Time) *Coalescer {
	if now == nil {
		now = time.Now
	}
	return &Coalescer{cfg: cfg.withDefaults(), now: now}
}

// Add appends streamed text (a delta or a whole block) and returns the blocks now due.
func (c *Coalescer) Add(text string) []string {
	if text == "" {
		return nil
	}
	if c.joinNext && len(c.buf) > 0 {
		c.buf = append(c.buf, '\n', '\n')
	}
	c.joinNext = false
	c.buf = append(c.buf, []rune(text)...)
	c.cur.WriteString(text)
	c.lastAdd = c.now()
	return c.drain(drainDue)
}

// Buffered is the text added and not yet delivered in a block: what a live draft shows
// at once, before the block it will be part of is due.
func (c *Coalescer) Buffered() string {
	return string(c.buf)
}

// EndBlock marks the end of an assistant text block; the next text is joined with "\n\n".
func (c *Coalescer) EndBlock() {
	if c.cur.Len() > 0 {
		c.blocks = append(c.blocks, c.cur.String())
		c.cur.Reset()
		c.joinNext = true
	}
}

// Deadline is when Poll should be called next; ok is false when nothing is buffered, or
// when the last Poll kept back a code block that is still being written (more text is
// needed first).
func (c *Coalescer) Deadline() (at time.Time, ok bool) {
	if len(c.buf) == 0 || c.held {
		return time.Time{}, false
	}
	return c.lastAdd.Add(c.cfg.Idle), true
}

// Poll returns the buffered text when the idle time has passed (in blocks of at most
// MaxChars, keeping back a code block still being written), else nil.
func (c *Coalescer) Poll() []string {
	at, ok := c.Deadline()
	if !ok || c.now().Before(at) {
		return nil
	}
	return c.drain(drainIdle)
}

// Flush returns the buffered text now, without waiting for the idle time
// (keeping back a code block still being written): the turn is about to
// wait for something, e.g. a question to the user.
func (c *Coalescer) Flush() []string {
	if len(c.buf) == 0 {
		return nil
	}
	return c.drain(drainIdle)
}

// Finish ends the turn: it reconciles the final result text (see Coalescer) and returns
// every remaining block. diverged reports that final did not match the stream and was
// delivered in full.
func (c *Coalescer) Finish(final string) (blocks []string, diverged bool) {
	c.EndBlock()
	streamed := strings.TrimSpace(strings.Join(c.blocks, "\n\n"))
	last := ""
	if len(c.blocks) > 0 {
		last = strings.TrimSpace(c.blocks[len(c.blocks)-1])
	}
	f := strings.TrimSpace(final)
	var extra string
	switch {
	case f == "" || strings.HasSuffix(streamed, f):
	case streamed != "" && strings.HasPrefix(f, streamed):
		extra = f[len(streamed):]
	case last != "" && strings.HasPrefix(f, last):
		extra = f[len(last):]
	default:
		blocks = c.drain(drainFinal)
		c.buf = append(c.buf[:0], []rune(f)...)
		return append(blocks, c.drain(drainFinal)...), true
	}
	c.buf = append(c.buf, []rune(extra)...)
	return c.drain(drainFinal), false
}

// Delta appends a piece of streamed text (claude's partial messages) and
// returns the blocks now due. Once a turn has deltas, its complete blocks
// (Block) repeat them and are ignored.
func (c *Coalescer) Delta(text string) []string {
	c.sawDeltas = true
	return c.Add(text)
}

// Block appends a complete text block when the turn streamed no deltas (it
// ends the block too), and returns the blocks now due.
func (c *Coalescer) Block(text string) []string {
	if c.sawDeltas {
		return nil
	}
	out := c.Add(text)
	c.EndBlock()
	return out
}

// drainMode says how much of the buffer drain delivers.
type drainMode int

const (
	// drainDue delivers only blocks that are due (text was added).
	drainDue drainMode = iota
	// drainIdle delivers everything (the stream paused), except a code
	// block still being written that may yet fit in one block.
	drainIdle
	// drainFinal delivers everything (the turn ended); a code block the
	// reply leaves open is closed.
	drainFinal
)

// drain cuts blocks from the buffer (at most MaxChars each) as mode allows.
func (c *Coalescer) drain(mode drainMode) []string {
	var out []string
	c.held = false
	for len(c.buf) > 0 {
		block, ok := c.next(mode)
		if !ok {
			break
		}
		if block != "" {
			out = append(out, block)
		}
	}
	if mode == drainFinal {
		c.carry = nil
	}
	return out
}

// next cuts one block from the buffer; ok is false when nothing is due.
// The block never ends inside a fenced code block unless the code block
// is longer than a block: then the block closes it and the next block
// reopens it with the same open line (info string included).
func (c *Coalescer) next(mode drainMode) (block string, ok bool) {
	n := len(c.buf)
	force := mode != drainDue
	if n < c.cfg.MinChars && !force {
		return "", false
	}
	var prefix []rune
	maxC := c.cfg.MaxChars
	if c.carry != nil {
		prefix = c.carry.reopenLine(c.cfg.MaxChars)
		maxC -= len(prefix) + 1
	}
	lo := min(c.cfg.MinChars, maxC)
	cut, skip := -1, 0
	if n >= lo {
		cut = lastIndex(c.buf, "\n\n", lo, min(n, maxC))
		skip = 2
	}
	if cut < 0 && n > maxC {
		cut, skip = c.bestBreak(lo, maxC)
	}
	if cut < 0 {
		if !force {
			return "", false
		}
		cut, skip = n, 0
	}
	var closeF *fence[rune]
	if c.cfg.Joined {
		// One message: no fence handling.
	} else if f := openAt(scanFences(c.buf, c.carry), cut); f != nil {
		closeLen := len(f.indent) + len(f.marker)
		switch {
		case f.closed && f.end <= maxC:
			// The code block ends within this block: cut after it.
			cut, skip = f.end, 0
		case f.start > 0 && strings.TrimSpace(string(c.buf[:f.start])) != "":
			// Deliver the text before the code block; it starts the next.
			cut, skip = f.start, 0
		case !f.closed && n <= maxC && mode != drainFinal:
			// Still being written, and it may fit one block: wait.
			c.held = mode == drainIdle
			return "", false
		case !f.closed && mode == drainFinal && n+1+closeLen <= maxC:
			// The reply ends inside the code block: close it.
			cut, skip, closeF = n, 0, f
		case !f.canBalance(c.cfg.MaxChars):
			// A marker too long to close and reopen: cut as chosen.
		default:
			if k, sk, ok := fenceCut(c.buf, f, maxC-closeLen-1); ok {
				cut, skip, closeF = k, sk, f
			}
		}
	}
	var b []rune
	if prefix != nil {
		b = append(append(b, prefix...), '\n')
	}
	b = append(b, c.buf[:cut]...)
	b = []rune(strings.TrimRightFunc(string(b), unicode.IsSpace))
	if closeF != nil {
		b = append(append(b, '\n'), closeF.closeLine()...)
	}
	rest := c.buf[cut+skip:]
	if closeF == nil {
		for len(rest) > 0 && (rest[0] == '\n' || rest[0] == '\r') {
			rest = rest[1:]
		}
		c.carry = nil
	} else {
		c.carry = carried(closeF)
	}
	c.buf = append(c.buf[:0], rest...)
	block = string(b)
	if c.record != nil {
		c.record(block, prefix != nil, closeF != nil)
	}
	if strings.TrimSpace(block) == "" {
		return "", true
	}
	return block, true
}

// fenceCut picks where a block ends inside fence f, leaving room for its
// close line: the last line end at most room runes in, after the open
// line and at least one rune of code; else a hard cut at room. The block
// is buf[:cut]; skip runes (the newline) are dropped after it.
func fenceCut(buf []rune, f *fence[rune], room int) (cut, skip int, ok bool) {
	first := 1 // a carried fence: at least one rune of code
	if f.start >= 0 {
		first = f.start + len(f.openLine) + 2
		for first-2 < len(buf) && buf[first-2] != '\n' {
			first++ // past a CR ending the open line
		}
	}
	if room < first {
		return 0, 0, false
	}
	for k := min(room, len(buf)-1); k >= first; k-- {
		if buf[k] == '\n' {
			return k, 1, true
		}
	}
	return room, 0, true
}

// carried copies f, which the block being cut closes, for the next block
// to reopen: the buffer it points into is about to be reused.
func carried(f *fence[rune]) *fence[rune] {
	open := append([]rune(nil), f.openLine...)
	n, m := len(f.indent), len(f.marker)
	return &fence[rune]{start: -1, openLine: open, indent: open[:n:n], marker: open[n : n+m : n+m]}
}

// openAt returns the fence of fences strictly containing the cut at i: after
// its open line starts and before its close line ends, or anywhere after the
// open line when the fence is not closed (yet); nil if none.
func openAt(fences []fence[rune], i int) *fence[rune] {
	for k := range fences {
		f := &fences[k]
		if f.start < i && (!f.closed || i < f.end) {
			return f
		}
	}
	return nil
}

// bestBreak finds a cut in [lo, hi] for an over-long buffer: newline, sentence end, space,
// else a hard cut at hi. skip is how many runes after the cut to drop.
func (c *Coalescer) bestBreak(lo, hi int) (cut, skip int) {
	if i := lastIndex(c.buf, "\n", lo, hi); i >= 0 {
		return i, 1
	}
	best := -1
	for _, s := range []string{". ", "! ", "? ", ".\t"} {
		if i := lastIndex(c.buf, s, lo-1, hi-1); i >= 0 && i+1 > best {
			best = i + 1
		}
	}
	if best >= 0 {
		return best, 1
	}
	if i := lastIndex(c.buf, " ", lo, hi); i >= 0 {
		return i, 1
	}
	return hi, 0
}

// lastIndex is the last i in [lo, hi] with buf[i:] starting with sep, or -1.
func lastIndex(buf []rune, sep string, lo, hi int) int {
	s := []rune(sep)
	for i := min(hi, len(buf)-len(s)); i >= lo && i >= 0; i-- {
		match := true
		for j := range s {
			if buf[i+j] != s[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}
