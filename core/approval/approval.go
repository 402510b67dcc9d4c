// Package approval asks a chat whether claude may use a tool (agent.approvals
// = "chat" or a chat's /mode ask): the question names the tool and a short,
// safe rendering of its input, with Allow / Deny / Always buttons where the
// channel has buttons and a typed yes / no / always where it does not. The
// turn waits for the answer, a timeout (which denies), or the question's
// withdrawal. Who may answer: the person whose message started the turn
// and owners, or owners only (agent.approvers).
//
// Questions live in memory: they belong to a running claude process, which
// a restart ends (the turn then runs again and asks again). A button
// pressed on a question from before a restart is told it is no longer open.
package approval

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Output is how questions reach the chat (core/delivery's *Dispatcher).
type Output interface {
	HasButtons(instance string) bool
	// SendButtons sends text with buttons under it where the channel has
	// them, in session order; it returns the platform ids sent.
	SendButtons(key string, tgt message.Target, text, format string, buttons [][]channel.Button) []string
	// EditText replaces a sent message's text (its buttons go); false when
	// the channel cannot edit.
	EditText(tgt message.Target, id, text string) bool
}

// Config is the approvals' settings.
type Config struct {
	// Timeout denies an unanswered question. Zero means 5 minutes.
	Timeout time.Duration
	// OwnersOnly: only owners answer (agent.approvers = "owners"); else the
	// person who started the turn answers too.
	OwnersOnly bool
}

// Question is one tool use to ask about.
type Question struct {
	// Key is the session; Target the chat asked.
	Key    string
	Target message.Target
	// Asker is who started the turn ("<instance>:<sender id>", the
	// message's From) and AskerName their name; empty for a scheduled turn,
	// which only owners answer.
	Asker, AskerName string
	Request          *runner.PermissionRequest
}

// Outcome is how a question ended.
type Outcome struct {
	Decision runner.Decision
	// By is who decided: a person's name (or id), "timeout" or
	// "withdrawn".
	By string
}

// Record is a decision, for /status and the status page.
type Record struct {
	Key, Tool, Summary string
	Allow, Always      bool
	By                 string
	At                 time.Time
}

// View is a question still open.
type View struct {
	ID, Key, Tool, Summary, Asker string
	Since                         time.Time
}

// Approvals holds the open questions. Safe for concurrent use.
type Approvals struct {
	out Output
	log hclog.Logger
	now func() time.Time
	// after is time.After, replaced in tests.
	after func(time.Duration) <-chan time.Time

	mu     sync.Mutex
	cfg    Config
	open   map[string]*question // by id
	recent []Record             // newest last, at most maxRecent
}

const (
	maxRecent      = 50
	defaultTimeout = 5 * time.Minute
	buttonPrefix   = "ap:"
)

type question struct {
	id      string
	q       Question
	summary string
	since   time.Time
	answers chan verdict // buffered 1: the first answer wins
	// choices are the options of a choice question (AskUserQuestion);
	// nil for a permission question. multi: several may be picked.
	choices []string
	multi   bool
}

type verdict struct {
	allow, always bool
	by            string
	// text is a choice question's answer.
	text string
}

// New returns Approvals sending through out.
func New(out Output, cfg Config, log hclog.Logger, now func() time.Time) *Approvals {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if now == nil {
		now = time.Now
	}
	return &Approvals{out: out, log: log.Named("approval"), now: now, after: time.After, cfg: cfg, open: map[string]*question{}}
}

// SetConfig replaces the settings (on reload); open questions keep theirs.
func (a *Approvals) SetConfig(cfg Config) {
	a.mu.Lock()
	a.cfg = cfg
	a.mu.Unlock()
}

func (a *Approvals) config() Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cfg
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	return c
}

// Ask asks the chat about q.Request and waits for the answer, the timeout
// (deny), the question's withdrawal or ctx. It does not answer the request;
// the caller does, with Outcome.Decision.
func (a *Approvals) Ask(ctx context.Context, q Question) Outcome {
	if q.Request.Tool == runner.AskUserQuestion {
		return a.choose(ctx, q)
	}
	cfg := a.config()
	qu := &question{id: newID(), q: q, summary: Summary(q.Request.Tool, q.Request.Input), since: a.now(), answers: make(chan verdict, 1)}
	buttons := a.out.HasButtons(q.Target.Instance)
	text, rows := render(qu, cfg, buttons)
	a.mu.Lock()
	a.open[qu.id] = qu
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.open, qu.id)
		a.mu.Unlock()
	}()
	ids := a.out.SendButtons(q.Key, q.Target, text, channel.FormatPlain, rows)
	if len(ids) == 0 {
		a.log.Warn("the approval question could not be sent; the tool use is denied", "session", q.Key, "tool", q.Request.Tool)
		return a.decided(qu, Outcome{Decision: runner.Decision{Message: "The question to the user could not be sent, so this tool use is denied."}, By: "undeliverable"})
	}
	msgID := ids[len(ids)-1]
	var o Outcome
	select {
	case v := <-qu.answers:
		o = Outcome{Decision: runner.Decision{Allow: v.allow, Always: v.allow && v.always}, By: v.by}
		if !v.allow {
			o.Decision.Message = "The user denied this tool use (" + v.by + ", from the chat). Do not try it another way; ask what they want instead."
		}
	case <-a.after(cfg.Timeout):
		o = Outcome{Decision: runner.Decision{Message: fmt.Sprintf("Nobody answered within %s, so this tool use is denied.", spoken.Precise(cfg.Timeout))}, By: "timeout"}
	case <-q.Request.Withdrawn:
		o = Outcome{By: "withdrawn"}
	case <-ctx.Done():
		o = Outcome{By: "withdrawn"}
	}
	end := resultLine(qu, o, cfg)
	if !a.out.EditText(q.Target, msgID, end) && o.By == "timeout" {
		// Where the question cannot be edited, a timeout is said; an
		// answer the person gave needs no echo.
		a.out.SendButtons(q.Key, q.Target, end, channel.FormatPlain, nil)
	}
	return a.decided(qu, o)
}

// decided logs and records an outcome.
func (a *Approvals) decided(qu *question, o Outcome) Outcome {
	decision := "denied"
	if o.Decision.Allow {
		decision = "allowed"
		if o.Decision.Always {
			decision = "always allowed"
		}
	}
	a.log.Info("tool approval", "session", qu.q.Key, "tool", qu.q.Request.Tool, "decision", decision, "by", o.By, "waited", a.now().Sub(qu.since).Round(time.Millisecond))
	if o.By == "withdrawn" {
		return o
	}
	a.mu.Lock()
	a.recent = append(a.recent, Record{Key: qu.q.Key, Tool: qu.q.Request.Tool, Summary: qu.summary, Allow: o.Decision.Allow, Always: o.Decision.Always, By: o.By, At: a.now()})
	if len(a.recent) > maxRecent {
		a.recent = slices.Delete(a.recent, 0, len(a.recent)-maxRecent)
	}
	a.mu.Unlock()
	return o
}

// Auto records a tool use allowed without a question (the session's
// "always").
func (a *Approvals) Auto(key string, req *runner.PermissionRequest) {
	qu := &question{q: Question{Key: key, Request: req}, summary: Summary(req.Tool, req.Input), since: a.now()}
	a.decided(qu, Outcome{Decision: runner.Decision{Allow: true, Always: true}, By: "always (this session)"})
}

// Answer takes m as the answer to an open question when it is one: a press
// of a question's button, or — in a chat with an open question — a typed
// yes, no or always from someone who may answer. handled false: m is an
// ordinary message. reply, when not empty, is said to the chat (the press
// came too late, or from someone who may not answer).
func (a *Approvals) Answer(m *message.Message, owner bool) (handled bool, reply string) {
	cfg := a.config()
	name := m.Sender.Name
	if name == "" {
		name = m.From
	}
	if act := m.Action; act != nil && strings.HasPrefix(act.ButtonID, choicePrefix) {
		id, n, _ := strings.Cut(strings.TrimPrefix(act.ButtonID, choicePrefix), ":")
		a.mu.Lock()
		qu := a.open[id]
		a.mu.Unlock()
		if qu == nil || !sameChat(qu.q.Target, m) {
			return true, "This question is no longer open."
		}
		if !may(qu.q, m, owner, cfg) {
			return true, whoMay(qu.q, cfg)
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(qu.choices) {
			return true, "That answer is not one of the buttons."
		}
		qu.give(verdict{text: qu.choices[i], by: name})
		return true, ""
	}
	if act := m.Action; act != nil && strings.HasPrefix(act.ButtonID, buttonPrefix) {
		id, verb, _ := strings.Cut(strings.TrimPrefix(act.ButtonID, buttonPrefix), ":")
		a.mu.Lock()
		qu := a.open[id]
		a.mu.Unlock()
		if qu == nil || !sameChat(qu.q.Target, m) {
			return true, "This question is no longer open."
		}
		if !may(qu.q, m, owner, cfg) {
			return true, whoMay(qu.q, cfg)
		}
		v, ok := verbs[verb]
		if !ok {
			return true, "That answer is not one of the buttons."
		}
		v.by = name
		qu.give(v)
		return true, ""
	}
	if m.Action != nil || strings.TrimSpace(m.Body) == "" || strings.HasPrefix(strings.TrimSpace(m.Command()), "/") {
		// A command (/stop, /status) stays a command while claude waits.
		return false, ""
	}
	a.mu.Lock()
	var oldest *question
	for _, qu := range a.open {
		if sameChat(qu.q.Target, m) && may(qu.q, m, owner, cfg) && (oldest == nil || qu.since.Before(oldest.since)) {
			oldest = qu
		}
	}
	a.mu.Unlock()
	if oldest == nil {
		return false, ""
	}
	if oldest.choices != nil {
		// While claude waits for a choice, what the person writes is the
		// answer.
		oldest.give(verdict{text: oldest.pick(m.Body), by: name})
		return true, ""
	}
	v, ok := typed(m.Command())
	if !ok {
		return false, ""
	}
	v.by = name
	oldest.give(v)
	return true, ""
}

func (qu *question) give(v verdict) {
	select {
	case qu.answers <- v:
	default: // answered already
	}
}

var verbs = map[string]verdict{"y": {allow: true}, "n": {}, "a": {allow: true, always: true}}

// typed reads a typed answer: yes / no / always and a few synonyms.
func typed(text string) (verdict, bool) {
	w := strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!?"))
	switch w {
	case "yes", "y", "allow", "ok", "approve":
		return verdict{allow: true}, true
	case "no", "n", "deny", "reject":
		return verdict{}, true
	case "always", "always allow":
		return verdict{allow: true, always: true}, true
	}
	return verdict{}, false
}

func sameChat(t message.Target, m *message.Message) bool {
	return t.Instance == m.Instance && t.ChatID == m.ChatID && t.ThreadID == m.ThreadID
}

// may reports whether the sender of m may answer q.
func may(q Question, m *message.Message, owner bool, cfg Config) bool {
	if owner {
		return true
	}
	return !cfg.OwnersOnly && q.Asker != "" && m.From == q.Asker
}

func whoMay(q Question, cfg Config) string {
	if cfg.OwnersOnly || q.Asker == "" {
		return "Only an owner can answer this question."
	}
	return fmt.Sprintf("Only %s or an owner can answer this question.", cmp.Or(q.AskerName, q.Asker))
}

// Open lists the open questions, oldest first.
func (a *Approvals) Open() []View {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]View, 0, len(a.open))
	for _, qu := range a.open {
		out = append(out, View{ID: qu.id, Key: qu.q.Key, Tool: qu.q.Request.Tool, Summary: qu.summary, Asker: cmp.Or(qu.q.AskerName, qu.q.Asker), Since: qu.since})
	}
	slices.SortFunc(out, func(x, y View) int { return x.Since.Compare(y.Since) })
	return out
}

// Recent lists the last decisions of session key ("" for all), newest
// first.
func (a *Approvals) Recent(key string, n int) []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Record
	for i := len(a.recent) - 1; i >= 0 && len(out) < n; i-- {
		if key == "" || a.recent[i].Key == key {
			out = append(out, a.recent[i])
		}
	}
	return out
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
