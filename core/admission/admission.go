// Package admission decides, for a message the journal accepted, whether it
// goes on to the agent: one [Verdict] per message — pass, run (a scheduled
// turn), answer without the agent, drop with the reason, hold for pairing,
// or leave it for the next start. The rules are all here, in the order
// they apply:
//
//  1. a stub of a message too large for the plugin protocol is told once
//     (when the sender would be admitted) and never passed on;
//  2. an empty message is dropped;
//  3. a scheduled run passes without access control or commands;
//  4. "/owner CODE" in a direct chat is the owner claim of clawhost init,
//     from any sender;
//  5. access control (core/access): /whoami is answered before it (also in
//     an unlisted group when addressed); an unlisted group is dropped; a
//     command of the bot's in an allowed group is addressed to it without
//     a mention (one from a sender who may not trigger it is logged); any
//     other unaddressed group message is kept as group history, a stranger under
//     the allowlist is refused (told once an hour), under pairing given a
//     code (held until an owner approves);
//  6. an admitted message is held to the sender's flood limit
//     (access.rate), may answer an open tool-use question, and then goes
//     through the message_received hooks (core/received).
//
// The stage owns its small state (refusal windows, the flood buckets, the
// unlisted groups) and reaches everything else through ports; it never
// calls the gateway, which acts on the verdict (caddy's route list: the
// server holds no handler's rule).
package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/received"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Kind is what happens to an arriving message.
type Kind int

// Kinds of verdict.
const (
	// Pass: the message goes on (debounce, commands, the session's queue).
	Pass Kind = iota
	// Run: a scheduled turn; straight to its session's queue, no commands.
	Run
	// Answer: answered without the agent; Verdict.Text is the reply,
	// recorded in the outbox (the entry is done once it is delivered).
	Answer
	// Drop: not passed on and not answered; the entry ends in
	// Verdict.State (dropped, done or failed) with Verdict.Reason.
	Drop
	// Hold: an unknown sender got a pairing code (Verdict.Code);
	// Verdict.Text answers them, and the message waits for an owner's
	// approval.
	Hold
	// Leave: the host is stopping; the entry stays accepted in the
	// journal and the next start decides again.
	Leave
)

var kindNames = [...]string{"pass", "run", "answer", "drop", "hold", "leave"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Verdict is the stage's decision for one message.
type Verdict struct {
	Kind Kind
	// Text is the answer (Answer, Hold).
	Text string
	// State and Reason end the journal entry (Drop).
	State  store.State
	Reason string
	// Code is the pairing code the sender was given (Hold).
	Code store.PairingCode
	// Amended (Pass): the message_received hooks decided the message just
	// now and changed it; its encoding must be taken again.
	Amended bool
}

// Entry is an arriving message: its journal id, its session key, and the
// message itself, which the stage may change (a button press becomes its
// id typed as text; message_received hooks rewrite it).
type Entry struct {
	ID      int64
	Key     sessionkey.Key
	Message *message.Message
}

// Rate is the per-sender flood limit (access.rate): N messages a window
// (Per); N 0: none.
type Rate struct {
	N   int
	Per time.Duration
}

// Settings are the stage's configuration in force; the gateway passes them
// with each message, so a reload applies to the next one.
type Settings struct {
	Access access.Policy
	// Rate is each sender's flood limit; a change starts every sender's
	// bucket full.
	Rate Rate
	// Received are the message_received hooks and their timeout.
	Received received.Settings
}

// Pairing is the store's pairing table; store.Store implements it.
type Pairing interface {
	IsApproved(ctx context.Context, instance, senderID string, ttl time.Duration) (bool, error)
	RequestPairing(ctx context.Context, req store.PairingRequest) (store.PairingResponse, error)
}

// Auditor is the audit trail; store.Store implements it.
type Auditor interface {
	Audit(ctx context.Context, e store.AuditEvent) error
}

// OwnerClaims checks "/owner CODE" against the one-time owner code `clawhost
// init` made; *ownerclaim.Claims implements it. Claim is called while the
// message is decided (it may block on a small file); on ownerclaim.Claimed
// the sender is an owner from then on (persisted by the implementation).
type OwnerClaims interface {
	Claim(entry, code string) (ownerclaim.Outcome, error)
}

// Approvals answers open tool-use questions; *approval.Approvals
// implements it. Answer reports whether m answers one (handled) and what
// the sender is told ("" nothing).
type Approvals interface {
	Answer(m *message.Message, owner bool) (handled bool, reply string)
}

// Received is the message_received stage; *received.Stage implements it.
type Received interface {
	Decide(ctx context.Context, set received.Settings, id int64, key sessionkey.Key, m *message.Message) received.Verdict
}

// Commands parses a command; *command.Registry implements it.
type Commands interface {
	Parse(text string) (command.Invocation, bool)
}

// History keeps a group's unaddressed messages as context for the next
// turn there; *turn.Turns implements it.
type History interface {
	Remember(m *message.Message, mayTrigger bool)
}

// Observer counts the messages not passed on; nil means none.
type Observer interface {
	Dropped(instance, reason string)
}

// Options are the stage's ports. Pairing, Auditor, Approvals, Received,
// Commands and History are required; the others may be nil.
type Options struct {
	Logger    hclog.Logger
	Now       func() time.Time
	Pairing   Pairing
	Auditor   Auditor
	Approvals Approvals
	Received  Received
	Commands  Commands
	History   History
	Observer  Observer
	// OwnerClaims answers "/owner CODE"; nil: /owner is not special.
	OwnerClaims OwnerClaims
	// OnOwner is called when sender (its "<instance>:<id>") claimed the
	// ownership: the caller adds it to the owners in force.
	OnOwner func(sender string)
	// OnSteps is called with what the message_received hooks said they
	// did (their Step lines joined) for session key.
	OnSteps func(key, steps string)
}

// Stage is the admission stage. Decide may be called concurrently for
// different conversations.
type Stage struct {
	opts Options
	log  hclog.Logger
	// refused limits the refusal of a stranger to one per sender an hour,
	// busyPairing the "try later" answer likewise, ownerRefusals the
	// refusal of a wrong /owner code to one per sender a minute.
	refused, busyPairing, ownerRefusals *access.Refusals
	// unlisted are the groups refused because access.groups does not list
	// them, for the status page.
	unlisted *access.Unlisted

	mu        sync.Mutex
	flood     *access.Flood // made by floodLimit for floodRate
	floodRate Rate
}

// New returns the stage over its ports.
func New(opts Options) *Stage {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	return &Stage{
		opts: opts, log: opts.Logger,
		refused: access.NewRefusals(time.Hour, opts.Now), busyPairing: access.NewRefusals(time.Hour, opts.Now),
		ownerRefusals: access.NewRefusals(time.Minute, opts.Now), unlisted: access.NewUnlisted(opts.Now),
	}
}

type nopObserver struct{}

func (nopObserver) Dropped(string, string) {}

// Unlisted are the groups that wrote since the start while access.groups
// does not list them, the most recent first.
func (s *Stage) Unlisted() []access.UnlistedGroup { return s.unlisted.List() }

// Forget drops the unlisted groups pol admits now (a reload listed them).
func (s *Stage) Forget(ctx context.Context, pol access.Policy) {
	s.unlisted.Forget(func(id string) bool {
		instance, chat, _ := strings.Cut(id, ":")
		return pol.Decide(ctx, &message.Message{Instance: instance, ChatID: chat, ChatType: channel.ChatGroup, WasMentioned: true}, nil) != access.IgnoreGroup
	})
}

func drop(state store.State, reason string) Verdict {
	return Verdict{Kind: Drop, State: state, Reason: reason}
}

func answer(text string) Verdict { return Verdict{Kind: Answer, Text: text} }

// entryLog is the logger of an entry's lines, made only when one is
// written: hclog's With copies the logger, and most arrivals log nothing.
func (s *Stage) entryLog(e Entry) hclog.Logger {
	return s.log.With("session", e.Key.String(), "id", e.ID)
}

// Decide decides what happens to e under set (see the package doc for the
// rules and their order). It may block on the store, the owner claim file
// and the message_received hooks; ctx ending while the hooks are asked
// gives Leave.
func (s *Stage) Decide(ctx context.Context, set Settings, e Entry) Verdict {
	m := e.Message
	approved := func(ctx context.Context, instance, sender string) bool {
		ok, err := s.opts.Pairing.IsApproved(ctx, instance, sender, set.Access.PairingTTL)
		if err != nil {
			s.log.Warn("pairing lookup failed; sender treated as unknown", "error", err)
		}
		return ok
	}
	if m.OversizeBytes > 0 {
		return s.oversize(m, set.Access.Decide(ctx, m, approved))
	}
	if strings.TrimSpace(m.Body) == "" && len(m.Media) == 0 {
		s.entryLog(e).Debug("empty message ignored")
		s.opts.Observer.Dropped(m.Instance, "empty")
		return drop(store.StateDropped, "empty")
	}
	if m.Scheduled != "" {
		// The configuration started it: no access check, no commands.
		s.entryLog(e).Info("scheduled turn", "schedule", m.Scheduled)
		return Verdict{Kind: Run}
	}
	if v, ok := s.claimOwner(ctx, m); ok {
		return v
	}
	v := set.Access.Decide(ctx, m, approved)
	// /whoami answers in an unlisted group too (when addressed), so the
	// operator learns the id to list; not where groups are disabled.
	whoamiHere := v != access.IgnoreGroup || (set.Access.GroupPolicy != access.PolicyDisabled && m.WasMentioned)
	if inv, ok := s.opts.Commands.Parse(m.Command()); ok && inv.Name == "whoami" && whoamiHere && (v != access.Unaddressed || m.WasMentioned) {
		return answer(whoami(m, v, set.Access.MayTrigger(m)))
	}
	if v == access.Unaddressed {
		v = s.command(ctx, &set.Access, e, approved)
	}
	switch v {
	case access.IgnoreGroup:
		if set.Access.GroupPolicy == access.PolicyDisabled {
			s.entryLog(e).Debug("groups are disabled (access.group_policy); message ignored", "group", m.To)
		} else if s.unlisted.Seen(m.To, m.ChatTitle) {
			s.entryLog(e).Info(fmt.Sprintf("a group access.groups does not list wrote; it gets no answer. To answer there, add %q to access.groups (it is on the status page too)", m.To),
				"group", m.To, "title", m.ChatTitle)
		}
		s.opts.Observer.Dropped(m.Instance, "group not allowed")
		return drop(store.StateDropped, "group not allowed")
	case access.Unaddressed:
		s.opts.History.Remember(m, set.Access.MayTrigger(m))
		return drop(store.StateDone, "group message not addressed to the bot")
	case access.Refuse:
		s.entryLog(e).Info("sender not allowed; message not passed to the agent", "sender", m.From)
		s.opts.Observer.Dropped(m.Instance, "not allowed")
		if s.refused.Allow(m.From) {
			return answer(fmt.Sprintf("You are not allowed to talk to this bot. Your id is %s; an owner can add it to access.allow_from.", m.From))
		}
		return drop(store.StateDropped, "not allowed")
	case access.Pair:
		return s.pairing(ctx, m)
	}
	if v, ok := s.flooded(ctx, set.Rate, e); ok {
		return v
	}
	if v, ok := s.answered(set.Access, e); ok {
		return v
	}
	return s.receive(ctx, set.Received, e)
}

// command decides a group message that does not address the bot
// (access.Unaddressed) and is one of its commands ("/usage", not
// "/usage@another_bot"): a command is addressed to the bot by its form,
// so it is taken as a mention — answered when its sender may trigger the
// agent there — and, when the sender may not, the log says why it gets
// no answer.
func (s *Stage) command(ctx context.Context, pol *access.Policy, e Entry, approved func(context.Context, string, string) bool) access.Verdict {
	m := e.Message
	inv, ok := s.opts.Commands.Parse(m.Command())
	if !ok || m.WasMentioned {
		return access.Unaddressed
	}
	addressed := *m
	addressed.WasMentioned = true
	if v := pol.Decide(ctx, &addressed, approved); v != access.Admit {
		s.entryLog(e).Info("a command in a group from a sender who may not trigger the agent there gets no answer (access.group_allow_from, access.members)",
			"command", "/"+inv.Name, "sender", m.From, "group", m.To)
		return access.Unaddressed
	}
	m.WasMentioned = true
	return access.Admit
}

// NoticeOversize tells a sender their message was too large to handle.
const NoticeOversize = "(Your message was too large to handle (%.1f MiB; at most 8 MiB get through) and was skipped. Please send it in smaller parts, or as a file.)"

// oversize decides the stub of a message too large for the plugin protocol
// (message.OversizeBytes): a sender the bot would answer is told once (the
// notice is the entry's reply); the agent never sees it.
func (s *Stage) oversize(m *message.Message, v access.Verdict) Verdict {
	s.log.Warn("inbound message too large for the plugin protocol; skipped", "instance", m.Instance, "chat", m.ChatID, "message", m.MessageID, "bytes", m.OversizeBytes)
	s.opts.Observer.Dropped(m.Instance, "too large")
	if v != access.Admit {
		return drop(store.StateDropped, "too large")
	}
	return answer(fmt.Sprintf(NoticeOversize, float64(m.OversizeBytes)/(1<<20)))
}

// pairing answers an unknown direct sender with a one-time code an owner
// approves (`clawhost pairing approve CODE` or /approve CODE). The code is
// sent once, when created; a sender who writes again while it is pending is
// not answered again until it expires.
func (s *Stage) pairing(ctx context.Context, m *message.Message) Verdict {
	res, err := s.opts.Pairing.RequestPairing(ctx, store.PairingRequest{Instance: m.Instance, SenderID: m.Sender.ID, SenderName: m.Sender.Name, SenderUsername: m.Sender.Username})
	switch {
	case errors.Is(err, store.ErrTooManyPending):
		s.log.Warn("pairing request refused: too many pending codes for this instance", "sender", m.From)
		s.opts.Observer.Dropped(m.Instance, "pairing")
		if s.busyPairing.Allow(m.From) {
			// Told once an hour per sender, not silence.
			return answer("This bot is handling other access requests right now. Please write again later to get a pairing code.")
		}
		return drop(store.StateDropped, "too many pending pairings")
	case err != nil:
		s.log.Error("pairing request failed", "sender", m.From, "error", err)
		return drop(store.StateFailed, "pairing failed")
	}
	s.opts.Observer.Dropped(m.Instance, "pairing")
	if !res.Created {
		return drop(store.StateDropped, "awaiting pairing approval")
	}
	// The code is a credential until it is used: never logged. The
	// operator reads it from `clawhost pairing list` or the sender.
	s.log.Info("pairing code issued; `clawhost pairing list` shows it, `clawhost pairing approve CODE` approves it", "sender", m.From, "expires", res.Code.ExpiresAt)
	return Verdict{Kind: Hold, Code: res.Code, Text: fmt.Sprintf("This bot does not know you yet. Your pairing code is %s (valid for %s). Ask the owner to approve it: clawhost pairing approve %s",
		res.Code.Code, spoken.Duration(res.Code.ExpiresAt.Sub(res.Code.CreatedAt)), res.Code.Code)}
}

// audit appends to the audit trail, logging a failure (an audit row the
// store cannot take does not stop what it records).
func (s *Stage) audit(ctx context.Context, e store.AuditEvent) {
	if err := s.opts.Auditor.Audit(ctx, e); err != nil && ctx.Err() == nil {
		s.log.Error("audit trail write failed", "kind", e.Kind, "subject", e.Subject, "error", err)
	}
}

// answered reports whether e (admitted) answers an open tool-use question
// — a press of its button or a typed yes / no / always — and decides it:
// the turn waiting for it goes on, and the message ends here (it is not a
// message for the agent). A press of another button stands for its id
// typed as text (a command plugin's picker), and goes on as such.
func (s *Stage) answered(pol access.Policy, e Entry) (Verdict, bool) {
	m := e.Message
	handled, reply := s.opts.Approvals.Answer(m, pol.IsOwner(m))
	if handled {
		if reply != "" {
			return answer(reply), true
		}
		return drop(store.StateDone, "answer to a tool-use question"), true
	}
	if m.Action != nil {
		m.Body, m.CommandBody = m.Action.ButtonID, ""
	}
	return Verdict{}, false
}

// receive runs the message_received hooks on an admitted message. A
// dropped message is answered with the hook's reason (recorded in the
// outbox, like any answer); one the host stops under stays accepted for
// the next start.
func (s *Stage) receive(ctx context.Context, set received.Settings, e Entry) Verdict {
	m := e.Message
	asked := m.Received == nil
	v := s.opts.Received.Decide(ctx, set, e.ID, e.Key, m)
	if v.Stopped {
		return Verdict{Kind: Leave}
	}
	amended := asked && m.Received != nil
	if amended {
		s.entryLog(e).Debug("message_received hooks decided", "hooks", strings.Join(m.Received.Hooks, ","), "dropped", v.Drop)
		if steps := m.Received.Steps; len(steps) > 0 && s.opts.OnSteps != nil {
			s.opts.OnSteps(e.Key.String(), strings.Join(steps, " · "))
		}
	}
	if v.Drop {
		s.opts.Observer.Dropped(m.Instance, "message_received hook")
		return answer(v.Reason)
	}
	return Verdict{Kind: Pass, Amended: amended}
}

// whoami answers /whoami before access is decided: who the sender is, in
// the form access lists take, whether they may use the agent here, and in
// a group the group's id, the form access.groups takes. mayTrigger is
// access.Policy.MayTrigger of m.
func whoami(m *message.Message, v access.Verdict, mayTrigger bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s.", m.From)
	if m.IsGroup() {
		fmt.Fprintf(&b, " This group is %s.", m.To)
	}
	switch {
	case v == access.IgnoreGroup:
		fmt.Fprintf(&b, " The agent does not answer here: to allow this group, an owner adds %q to access.groups.", m.To)
	case m.IsGroup() && !mayTrigger:
		fmt.Fprintf(&b, " Your messages here are context for the agent only: to let you talk to it, an owner adds %q to access.group_allow_from (or members).", m.From)
	case v == access.Admit || v == access.Unaddressed:
		b.WriteString(" You may talk to the agent here.")
	default:
		fmt.Fprintf(&b, " To allow you, an owner adds %q to access.allow_from.", m.From)
	}
	return b.String()
}
