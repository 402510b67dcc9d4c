// Package approval asks whether claude may use a tool (agent.approvals =
// "chat", or a chat's /mode ask where agent.permission_modes lists it):
// the question names the tool and shows exactly what will run (render.go),
// with Allow / Deny / Always buttons where the channel has buttons and a
// typed yes / no / always where it does not. The turn waits for the
// answer, a timeout (which denies), or the question's withdrawal.
//
// Who answers is the operator's choice (agent.approvers), never the
// asker's: with "owners" (the default) only owners answer — a question
// about a turn someone else started goes to each owner's direct chat
// (Config.DirectChats) and the turn's chat is told it waits for an owner;
// where no owner's direct chat can be addressed (Discord: a channel id is
// not a user id) it is asked in the turn's chat, answerable by owners
// only; with no owner at all it is denied at once. A question asked only
// in the turn's own chat, where the turn shows a live card (core/turn) on
// a channel with buttons, goes on the card (Question.Card) instead of in a
// message of its own. With "sender" the
// person whose message started the turn answers too. A non-owner never
// answers their own request otherwise. "Always" allows the request's exact
// rules (runner.PermissionRequest.AlwaysRules), not the tool.
//
// Questions live in memory: they belong to a running claude process, which
// a restart ends (the turn then runs again and asks again). A button
// pressed on a question from before a restart is told it is no longer open.
package approval

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Output is how questions reach the chat (core/delivery's *Dispatcher).
type Output interface {
	HasButtons(instance string) bool
	// SendButtons sends text with buttons under it where the channel has
	// them, in session order; it returns the platform ids sent.
	SendButtons(key sessionkey.Key, tgt message.Target, text string, format channel.Format, buttons [][]channel.Button) []string
	// SendFile sends data as a text file called name, with caption, in
	// session order; false when the channel sends no files or the send
	// failed.
	SendFile(key sessionkey.Key, tgt message.Target, name string, data []byte, caption string) bool
	// EditText replaces a sent message's text (its buttons go); false when
	// the channel cannot edit.
	EditText(tgt message.Target, id, text string) bool
	// EditButtons replaces a sent message's text and buttons (a
	// multi-select question's toggles); false when the channel cannot.
	EditButtons(tgt message.Target, id, text string, buttons [][]channel.Button) bool
	// Fits reports whether text in format is one message on the
	// instance's channel (a plan longer than that goes as a file).
	Fits(instance, text string, format channel.Format) bool
}

// Config is the approvals' settings.
type Config struct {
	// Timeout denies an unanswered question. Zero means 5 minutes.
	Timeout time.Duration
	// OwnersOnly: only owners answer (agent.approvers = "owners"); else the
	// person who started the turn answers too ("sender").
	OwnersOnly bool
	// Owners are access.owners ("<instance>:<sender id>").
	Owners []string
	// DirectChats are the instances whose direct chat with a sender has
	// the sender's id as its chat id, as their plugins declare it
	// (channel.Capabilities.DirectToSender): there a question can be sent
	// to an owner's own chat.
	DirectChats map[string]bool
}

// Question is one tool use to ask about.
type Question struct {
	// Key is the session; Target the turn's chat.
	Key    sessionkey.Key
	Target message.Target
	// Asker is who started the turn ("<instance>:<sender id>", the
	// message's From) and AskerName their name; empty for a scheduled turn,
	// which only owners answer. AskerOwner: the asker is an owner.
	Asker, AskerName string
	AskerOwner       bool
	Request          *runner.PermissionRequest
	// Card, when not nil, is the turn's live card: a question asked only
	// in the turn's own chat, where the channel has buttons, goes on it
	// (text, Allow / Deny / Always beside its Stop) instead of in a
	// message of its own; a press routes as on that message.
	Card Card
}

// Card is a running turn's card (core/turn's QuestionCard).
type Card interface {
	// Ask shows text (in format) and buttons on the card at once; false
	// when it cannot (the question is then sent as a message).
	Ask(text string, format channel.Format, buttons [][]channel.Button) bool
	// Answered takes the question off the card; line is how it ended.
	Answered(line string)
}

// Outcome is how a question ended.
type Outcome struct {
	Decision runner.Decision
	// KeepPlanning: a plan (ExitPlanMode) was sent back to claude by ByID,
	// whose next message in the chat is the feedback on it.
	KeepPlanning bool
	// By is who decided: a person's name (or id), "timeout",
	// "withdrawn", "undeliverable" or "no approver".
	By string
	// ByID is the decider's stable id, as the audit trail names actors:
	// "<instance>:<sender id>" for a person in a chat, "admin" for the
	// status page; "" when nobody decided (a timeout, a rule).
	ByID string
}

// Record is a decision, for /status and the status page.
type Record struct {
	Key, Tool, Summary string
	Allow, Always      bool
	// By is the decider as the chat saw them (a display name); ByID
	// their stable id (Outcome.ByID), which the audit trail records.
	By, ByID string
	At       time.Time
	// Chat is the turn's chat; Digest the input's SHA-256 ("sha256:" and
	// 16 hex digits), which the audit trail keeps instead of the input.
	Chat   message.Target
	Digest string
}

// Digest is the short SHA-256 of a tool's input, as the audit trail
// names it.
func Digest(input []byte) string {
	sum := sha256.Sum256(input)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// OnDecided sets fn, called with every decision (the audit trail); nil:
// none. Set it before the first question.
func (a *Approvals) OnDecided(fn func(Record)) { a.onDecided = fn }

// View is a question still open.
type View struct {
	ID, Key, Tool, Summary, Asker string
	Since                         time.Time
}

// Approvals holds the open questions. Safe for concurrent use.
type Approvals struct {
	out Output
	log hclog.Logger
	// onDecided is OnDecided's fn.
	onDecided func(Record)
	now       func() time.Time
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
	// asked are the chats the question was sent to, each with the id of
	// the message to edit once it is decided; only there is it answered.
	// targets are the chats it is being sent to (set before the sends).
	asked   []sentTo
	targets []message.Target
	// ownersOnly is Config.OwnersOnly when it was asked.
	ownersOnly bool
	// forOther: asked in an owner's chat about another person's turn.
	forOther bool
	r        rendering
	// rules are what "always" allows (none: "always" is not offered).
	rules []runner.Rule
	// choices are the options of a choice question (AskUserQuestion);
	// nil for a permission question. multi: several may be picked.
	choices []string
	multi   bool
	// ctext is a choice question's text; picked the options a
	// multi-select's toggles picked so far (a.mu); unshown: a toggle came
	// while the question was being sent, before there was a message to
	// edit, and the send's end shows it.
	ctext   string
	picked  []bool
	unshown bool
	// plan: the question is a plan (ExitPlanMode): Approve / Keep
	// planning, never always (plan.go).
	plan bool
}

type sentTo struct {
	tgt message.Target
	id  string
}

type verdict struct {
	allow, always bool
	// keep: a plan sent back (Keep planning).
	keep bool
	// by is the decider's display name, byID their "<instance>:<id>".
	by, byID string
	// text is a choice question's answer; picked a multi-select's.
	text   string
	picked []string
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

// route decides where q is asked: the chats to send the question to;
// notify: the turn's chat is told it waits for an owner. No chats: nobody
// may approve (no owner to ask).
func route(q Question, cfg Config) (chats []message.Target, notify bool) {
	if !cfg.OwnersOnly || q.AskerOwner || ownerChat(q.Target, cfg) {
		return []message.Target{q.Target}, false
	}
	sameInstance := false
	for _, o := range cfg.Owners {
		instance, id, ok := strings.Cut(o, ":")
		if !ok || id == "" || id == "*" {
			continue
		}
		sameInstance = sameInstance || instance == q.Target.Instance
		if cfg.DirectChats[instance] {
			t := message.Target{Instance: instance, ChatID: id}
			if !slices.Contains(chats, t) {
				chats = append(chats, t)
			}
		}
	}
	if len(chats) > 0 {
		return chats, true
	}
	if sameInstance {
		// The owners' direct chats cannot be addressed here (Discord):
		// ask where the turn runs; only owners may answer.
		return []message.Target{q.Target}, false
	}
	return nil, false
}

// ownerChat reports whether t is an owner's direct chat.
func ownerChat(t message.Target, cfg Config) bool {
	return t.ThreadID == "" && cfg.DirectChats[t.Instance] && slices.Contains(cfg.Owners, t.Instance+":"+t.ChatID)
}

// Ask asks the approvers about q.Request and waits for the answer, the
// timeout (deny), the question's withdrawal or ctx. It does not answer the
// request; the caller does, with Outcome.Decision.
func (a *Approvals) Ask(ctx context.Context, q Question) Outcome {
	if q.Request.Tool == runner.AskUserQuestion {
		return a.choose(ctx, q)
	}
	cfg := a.config()
	r, rules := renderInput(q.Request.Tool, q.Request.Input), q.Request.AlwaysRules()
	plan := isPlan(q.Request)
	if plan {
		r, rules = renderPlan(q.Request.Input), nil
	}
	qu := &question{id: newID(), q: q, summary: cut(visible(r.text), summaryLen, summaryLines), since: a.now(), answers: make(chan verdict, 1),
		ownersOnly: cfg.OwnersOnly, r: r, rules: rules, plan: plan}
	chats, notify := route(q, cfg)
	if len(chats) == 0 {
		why := "set access.owners"
		if len(cfg.Owners) > 0 {
			why = "no owner can be asked from here (the owners' direct chats cannot be reached on their channels)"
		}
		a.log.Warn("a tool use needs approval and there is no owner to ask; denied", "session", q.Key.String(), "tool", q.Request.Tool)
		a.out.SendButtons(q.Key, q.Target, fmt.Sprintf("%s was denied — no approver: %s. Only owners approve tool use here (agent.approvers).", toolName(q.Request.Tool), why), channel.FormatPlain, nil)
		return a.decided(qu, Outcome{Decision: runner.Decision{Message: "Nobody may approve tool use here (no owner can be asked), so this tool use is denied. Go on without it."}, By: "no approver"})
	}
	qu.forOther = notify
	a.mu.Lock()
	a.open[qu.id] = qu
	// Where it is asked, before the sends: a press can come back before
	// the send that carried the button has returned its message id.
	qu.targets = chats
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.open, qu.id)
		a.mu.Unlock()
	}()
	onCard := q.Card != nil && !notify && len(chats) == 1 && chats[0] == q.Target && !qu.r.long && a.out.HasButtons(q.Target.Instance)
	if onCard {
		text, rows := qu.render(cfg, true, true)
		onCard = q.Card.Ask(text, qu.format(), rows)
	}
	for _, t := range chats {
		if onCard {
			a.mu.Lock()
			qu.asked = append(qu.asked, sentTo{tgt: t}) // no message of its own: the card
			a.mu.Unlock()
			continue
		}
		if id := a.send(qu, t, cfg); id != "" {
			a.mu.Lock()
			qu.asked = append(qu.asked, sentTo{t, id})
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	asked := len(qu.asked)
	a.mu.Unlock()
	if asked == 0 {
		a.log.Warn("the approval question could not be sent; the tool use is denied", "session", q.Key.String(), "tool", q.Request.Tool)
		if notify {
			a.out.SendButtons(q.Key, q.Target, fmt.Sprintf("%s was not run: no owner could be reached to approve it.", toolName(q.Request.Tool)), channel.FormatPlain, nil)
		}
		return a.decided(qu, Outcome{Decision: runner.Decision{Message: "The question to the user could not be sent, so this tool use is denied."}, By: "undeliverable"})
	}
	var waiting []string
	if notify {
		waiting = a.out.SendButtons(q.Key, q.Target, fmt.Sprintf("Waiting for an owner to approve %s.", toolName(q.Request.Tool)), channel.FormatPlain, nil)
	}
	var o Outcome
	select {
	case v := <-qu.answers:
		o = Outcome{Decision: runner.Decision{Allow: v.allow}, By: v.by, ByID: v.byID}
		if v.allow && v.always {
			o.Decision.Always = qu.rules
		}
		switch {
		case v.allow:
		case qu.plan:
			o.KeepPlanning, o.Decision.Message = true, keepPlanning(v.by)
		default:
			o.Decision.Message = "The user denied this tool use (" + v.by + ", from the chat). Do not try it another way; ask what they want instead."
		}
	case <-a.after(cfg.Timeout):
		o = Outcome{Decision: runner.Decision{Message: fmt.Sprintf("Nobody answered within %s, so this tool use is denied.", spoken.Precise(cfg.Timeout))}, By: "timeout"}
		if qu.plan {
			o.Decision.Message = fmt.Sprintf("Nobody answered within %s, so the plan is not approved: stay in plan mode and do not start the work.", spoken.Precise(cfg.Timeout))
		}
	case <-q.Request.Withdrawn:
		o = Outcome{By: "withdrawn"}
	case <-ctx.Done():
		o = Outcome{By: "withdrawn"}
	}
	a.showOutcome(qu, o, cfg, notify, waiting)
	return a.decided(qu, o)
}

// showOutcome edits the question where it was asked (or the card) into its
// outcome, says a timeout where it cannot be edited, and tells the turn's
// chat, when it was told to wait (notify), where it waits.
func (a *Approvals) showOutcome(qu *question, o Outcome, cfg Config, notify bool, waiting []string) {
	q := qu.q
	end := qu.resultLine(o, cfg)
	a.mu.Lock()
	sent := slices.Clone(qu.asked)
	a.mu.Unlock()
	for _, s := range sent {
		if s.id == "" {
			q.Card.Answered(end)
			continue
		}
		if !a.out.EditText(s.tgt, s.id, end) && o.By == "timeout" {
			// Where the question cannot be edited, a timeout is said; an
			// answer the person gave needs no echo.
			a.out.SendButtons(q.Key, s.tgt, end, channel.FormatPlain, nil)
		}
	}
	if notify && o.By != "withdrawn" {
		// The turn's chat learns the outcome where it was told to wait.
		if len(waiting) == 0 || !a.out.EditText(q.Target, waiting[len(waiting)-1], end) {
			a.out.SendButtons(q.Key, q.Target, end, channel.FormatPlain, nil)
		}
	}
}

// send sends the question to chat t — first the whole input as a file
// when it is long, else (no file could be sent) all of it in the text —
// and returns the id of the message to edit once decided ("" when it
// could not be sent).
func (a *Approvals) send(qu *question, t message.Target, cfg Config) string {
	if qu.plan {
		return a.sendPlan(qu, t, cfg)
	}
	whole := true
	if qu.r.long {
		caption := fmt.Sprintf("The whole %s claude wants to run with %s (%s), for the question below.", qu.r.what, toolName(qu.q.Request.Tool), count(len(qu.r.file), "byte"))
		whole = !a.out.SendFile(qu.q.Key, t, qu.r.name, qu.r.file, caption)
	}
	text, rows := qu.render(cfg, a.out.HasButtons(t.Instance), whole)
	ids := a.out.SendButtons(qu.q.Key, t, text, channel.FormatPlain, rows)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// decided logs and records an outcome.
func (a *Approvals) decided(qu *question, o Outcome) Outcome {
	decision := "denied"
	if o.Decision.Allow {
		decision = "allowed"
		if len(o.Decision.Always) > 0 {
			decision = "always allowed"
		}
	}
	var rules []string
	for _, r := range o.Decision.Always {
		rules = append(rules, r.String())
	}
	a.log.Info("tool approval", "session", qu.q.Key.String(), "tool", qu.q.Request.Tool, "decision", decision, "rules", strings.Join(rules, " "), "by", o.By, "waited", a.now().Sub(qu.since).Round(time.Millisecond))
	if o.By == "withdrawn" {
		return o
	}
	rec := Record{Key: qu.q.Key.String(), Tool: qu.q.Request.Tool, Summary: qu.summary, Allow: o.Decision.Allow, Always: len(o.Decision.Always) > 0, By: o.By, ByID: o.ByID, At: a.now(),
		Chat: qu.q.Target, Digest: Digest(qu.q.Request.Input)}
	if a.onDecided != nil {
		a.onDecided(rec)
	}
	a.mu.Lock()
	a.recent = append(a.recent, rec)
	if len(a.recent) > maxRecent {
		a.recent = slices.Delete(a.recent, 0, len(a.recent)-maxRecent)
	}
	a.mu.Unlock()
	return o
}

// Auto records a tool use allowed without a question by a rule the
// session stored (an earlier "always").
func (a *Approvals) Auto(key sessionkey.Key, req *runner.PermissionRequest, rule runner.Rule) {
	qu := &question{q: Question{Key: key, Request: req}, summary: Summary(req.Tool, req.Input), since: a.now()}
	a.decided(qu, Outcome{Decision: runner.Decision{Allow: true, Always: []runner.Rule{rule}}, By: "always (this session): " + rule.String()})
}

// Open lists the open questions, oldest first.
func (a *Approvals) Open() []View {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]View, 0, len(a.open))
	for _, qu := range a.open {
		out = append(out, View{ID: qu.id, Key: qu.q.Key.String(), Tool: qu.q.Request.Tool, Summary: qu.summary, Asker: cmp.Or(qu.q.AskerName, qu.q.Asker), Since: qu.since})
	}
	slices.SortFunc(out, func(x, y View) int { return x.Since.Compare(y.Since) })
	return out
}

// Recent lists the last decisions of session key ("" for all), newest
// first.
func (a *Approvals) Recent(key sessionkey.Key, n int) []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Record
	for i := len(a.recent) - 1; i >= 0 && len(out) < n; i-- {
		if key == (sessionkey.Key{}) || a.recent[i].Key == key.String() {
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

// Decide answers the open question id from outside a chat (the status
// page): allow or deny it, by by (as the chat is told) whose stable id
// is byID (as the audit trail records it). It reports whether the
// question was open.
func (a *Approvals) Decide(id string, allow bool, by, byID string) bool {
	a.mu.Lock()
	qu := a.open[id]
	a.mu.Unlock()
	if qu == nil || qu.choices != nil {
		return false
	}
	qu.give(verdict{allow: allow, keep: !allow && qu.plan, by: by, byID: byID})
	return true
}
