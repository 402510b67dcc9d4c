package runner

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
	return c.drain(false)
}

// EndBlock marks the end of an assistant text block; the next text is joined with "\n\n".
func (c *Coalescer) EndBlock() {
	if c.cur.Len() > 0 {
		c.blocks = append(c.blocks, c.cur.String())
		c.cur.Reset()
		c.joinNext = true
	}
}

// Deadline is when Poll should be called next; ok is false when nothing is buffered.
func (c *Coalescer) Deadline() (at time.Time, ok bool) {
	if len(c.buf) == 0 {
		return time.Time{}, false
	}
	return c.lastAdd.Add(c.cfg.Idle), true
}

// Poll returns the buffered text when the idle time has passed (in blocks of at most
// MaxChars), else nil.
func (c *Coalescer) Poll() []string {
	at, ok := c.Deadline()
	if !ok || c.now().Before(at) {
		return nil
	}
	return c.drain(true)
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
		blocks = c.drain(true)
		c.buf = append(c.buf[:0], []rune(f)...)
		return append(blocks, c.drain(true)...), true
	}
	c.buf = append(c.buf, []rune(extra)...)
	return c.drain(true), false
}

// Feed applies one runner Event and returns the blocks due. Deltas are used when the turn
// has them; complete EventText blocks otherwise. EventResult finishes (with the result
// text on success, "" on failure). Other events return nil.
func (c *Coalescer) Feed(e Event) []string {
	switch e.Kind {
	case EventTextDelta:
		c.sawDeltas = true
		return c.Add(e.Text)
	case EventBlockEnd:
		c.EndBlock()
	case EventText:
		if !c.sawDeltas {
			out := c.Add(e.Text)
			c.EndBlock()
			return out
		}
	case EventResult:
		final := ""
		if e.Result != nil && e.Result.Err == nil {
			final = e.Result.Text
		}
		out, _ := c.Finish(final)
		return out
	}
	return nil
}

// drain cuts due blocks; force delivers everything (still at most MaxChars per block).
func (c *Coalescer) drain(force bool) []string {
	var out []string
	for len(c.buf) > 0 {
		n := len(c.buf)
		if n < c.cfg.MinChars && !force {
			break
		}
		cut, skip := -1, 0
		if n >= c.cfg.MinChars {
			cut = lastIndex(c.buf, "\n\n", c.cfg.MinChars, min(n, c.cfg.MaxChars))
			skip = 2
		}
		if cut < 0 && n > c.cfg.MaxChars {
			cut, skip = c.bestBreak()
		}
		if cut < 0 {
			if !force {
				break
			}
			cut, skip = n, 0
		}
		block := strings.TrimRightFunc(string(c.buf[:cut]), unicode.IsSpace)
		rest := c.buf[cut+skip:]
		for len(rest) > 0 && (rest[0] == '\n' || rest[0] == '\r') {
			rest = rest[1:]
		}
		c.buf = append(c.buf[:0], rest...)
		if strings.TrimSpace(block) != "" {
			out = append(out, block)
		}
	}
	return out
}

// bestBreak finds a cut in [MinChars, MaxChars] for an over-long buffer: newline, sentence
// end, space, else a hard cut at MaxChars. skip is how many runes after the cut to drop.
func (c *Coalescer) bestBreak() (cut, skip int) {
	lo, hi := c.cfg.MinChars, c.cfg.MaxChars
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
