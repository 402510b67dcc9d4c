package turn

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// The turn card: on a channel that edits messages, a turn that runs longer
// than cardDelay shows one message the host edits while it runs — what
// claude is doing now, for how long, how many messages wait behind it —
// with a Stop button. It lives in the turn's draft: when the answer
// streams, the draft shows the answer instead (the Stop button stays until
// the end); the final reply replaces it. A turn that ends without a reply
// in it (stopped, NO_REPLY, files with no text before them) collapses
// it to one line. A tool approval asked only in the turn's own chat goes
// on the card while it waits (its text, Allow / Deny / Always beside
// Stop), shown at once; asked elsewhere (owners in their own chats), the
// card says "Waiting for approval: <tool>".
const (
	// cardDelay: a turn answered sooner shows no card (the answer is the
	// first thing the chat sees, and notifies).
	cardDelay = 3 * time.Second
	// cardTick is how often the card is looked at; it is edited only when
	// its text changed (a new step, the elapsed time's next step, the
	// queue), so at most every cardTick: under Telegram's and Discord's
	// edit rates.
	cardTick = 2 * time.Second
	// cardLines is how many tool steps a verbose card lists.
	cardLines = 8
	// StopButton is the card's Stop button: a press stands for /stop typed
	// by whoever pressed it (the gateway's rule for a button that answers
	// no question), so /stop's roles apply.
	StopButton = "/stop"
)

// card is a running turn's card.
type card struct {
	t       *Turns
	key     string
	skey    sessionkey.Key
	draft   Draft
	started time.Time
	verbose bool

	mu        sync.Mutex
	steps     []string // the tool steps, the current one last (verbose: up to cardLines)
	waiting   string   // a tool use waiting for approval
	question  string   // an approval question the card carries (Ask)
	qbuttons  [][]channel.Button
	qformat   channel.Format // the question's format (a plan: markdown)
	poke      chan struct{}  // show the card now (a question came or went)
	answering bool           // the answer streams: the draft shows it
	shown     bool           // the card was shown
	done      chan struct{}
	wg        sync.WaitGroup
}

// newCard starts the card of a turn whose draft is d.
func (t *Turns) newCard(skey sessionkey.Key, d Draft, verbose bool) *card {
	key := skey.String()
	c := &card{t: t, key: key, skey: skey, draft: d, started: t.opts.Now(), verbose: verbose, done: make(chan struct{}), poke: make(chan struct{}, 1)}
	t.cards.Store(key, c)
	c.wg.Add(1)
	go c.run()
	return c
}

// CardState is what the card of the session's running turn says, on one
// line ("⏳ Working · 40s · Bash: go test ./... · 2 messages wait behind
// this one."), "answering" once the answer streams into it, "" when no
// turn of the session runs with a card. The status page shows it.
func (t *Turns) CardState(key string) string {
	v, ok := t.cards.Load(key)
	if !ok {
		return ""
	}
	c := v.(*card)
	c.mu.Lock()
	answering := c.answering
	c.mu.Unlock()
	if answering {
		return "answering"
	}
	return strings.ReplaceAll(c.render(), "\n", " · ")
}

func (c *card) run() {
	defer c.wg.Done()
	timer, first := c.t.opts.Clock.NewTimer(cardDelay)
	defer timer.Stop()
	select {
	case <-c.done:
		return
	case <-first:
	case <-c.poke:
	}
	ticker, tick := c.t.opts.Clock.NewTicker(cardTick)
	defer ticker.Stop()
	last := ""
	for {
		text := c.render()
		c.mu.Lock()
		if c.answering {
			c.mu.Unlock()
			return
		}
		if text != last {
			// Under the lock: the answer's first draft update (streaming)
			// comes after this card, never before it.
			last, c.shown = text, true
			rows := append(append([][]channel.Button(nil), c.qbuttons...), []channel.Button{{ID: StopButton, Label: "⏹ Stop"}})
			c.draft.Card(text, c.format(), rows)
		}
		c.mu.Unlock()
		select {
		case <-c.done:
			return
		case <-tick:
		case <-c.poke:
		}
	}
}

// render is the card's text now.
func (c *card) render() string {
	c.mu.Lock()
	steps, waiting, question := append([]string(nil), c.steps...), c.waiting, c.question
	c.mu.Unlock()
	var b strings.Builder
	switch {
	case question != "":
		fmt.Fprintf(&b, "⏸ Waiting for approval · %s\n%s", elapsed(c.t.opts.Now().Sub(c.started)), question)
		steps = nil
	case waiting != "":
		fmt.Fprintf(&b, "⏸ Waiting for approval: %s · %s", waiting, elapsed(c.t.opts.Now().Sub(c.started)))
	default:
		fmt.Fprintf(&b, "⏳ Working · %s", elapsed(c.t.opts.Now().Sub(c.started)))
	}
	switch {
	case question != "":
	case len(steps) == 0:
		b.WriteString("\nthinking…")
	case c.verbose:
		for _, s := range steps {
			b.WriteString("\n" + s)
		}
	default:
		b.WriteString("\n" + steps[len(steps)-1])
	}
	if c.t.opts.Waiting != nil {
		switch n := c.t.opts.Waiting(c.skey); {
		case n == 1:
			b.WriteString("\n1 message waits behind this one.")
		case n > 1:
			fmt.Fprintf(&b, "\n%d messages wait behind this one.", n)
		}
	}
	return b.String()
}

// step records a tool step (the progress line of a tool use).
func (c *card) step(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, line)
	if len(c.steps) > cardLines {
		c.steps = c.steps[len(c.steps)-cardLines:]
	}
}

// asking marks a tool use waiting for approval ("" when answered).
func (c *card) asking(tool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiting = tool
}

// Ask puts an approval question on the card (QuestionCard): its text in
// place of the steps, its buttons above Stop, shown now.
func (c *card) Ask(text string, format channel.Format, buttons [][]channel.Button) bool {
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return false
	default:
	}
	if c.answering || !c.draft.Fits(text, format) {
		c.mu.Unlock()
		return false
	}
	c.question, c.qbuttons, c.qformat = text, buttons, format
	c.mu.Unlock()
	c.show()
	return true
}

// Answered takes the question off the card (QuestionCard); the first line
// of how it ended stays as a step.
func (c *card) Answered(line string) {
	first, _, _ := strings.Cut(line, "\n")
	first = strings.TrimSuffix(strings.TrimSpace(first), ":")
	c.mu.Lock()
	c.question, c.qbuttons, c.qformat, c.waiting = "", nil, "", ""
	c.mu.Unlock()
	if first != "" {
		c.step(first)
	}
	c.show()
}

// format is the format of the card's text (c.mu held): a question's
// (markdown for a plan; the card's own lines read the same in markdown),
// else plain.
func (c *card) format() channel.Format {
	if c.question != "" && c.qformat != "" {
		return c.qformat
	}
	return channel.FormatPlain
}

// show has the card shown at once rather than at its next tick.
func (c *card) show() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// streaming reports that the answer streams into the draft: the card
// stops showing itself.
func (c *card) streaming() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answering = true
}

// stop ends the card's updates; it reports whether the card was shown
// and the answer never replaced it.
func (c *card) stop() (showing bool) {
	c.t.cards.CompareAndDelete(c.key, c)
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shown && !c.answering
}

// elapsed is a duration as a card shows it: to 5 s under a minute, to
// 10 s under ten minutes, then to the minute.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/(5*time.Second))*5)
	case d < 10*time.Minute:
		d = d.Truncate(10 * time.Second)
		return fmt.Sprintf("%dm %02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
	return fmt.Sprintf("%dh %02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// took is a duration as the ping and a collapsed card say it.
func took(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm %02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh %02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
