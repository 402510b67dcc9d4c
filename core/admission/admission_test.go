package admission

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/received"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// fakes are the stage's ports, recording what they are asked.
type fakes struct {
	mu sync.Mutex
	// approved senders ("<instance>:<id>") through pairing.
	approved map[string]bool
	// pairingErr, when set, fails RequestPairing; pending are the codes
	// already given, by sender.
	pairingErr error
	pending    map[string]store.PairingCode
	audits     []store.AuditEvent
	// code is the owner code; used once it matched.
	code    string
	used    bool
	owners  []string
	claims  int
	steps   []string
	dropped []string
	// question: a typed "yes" answers an open tool-use question, with
	// reply.
	question bool
	reply    string
	// hook is the message_received hooks' decision; asked counts them.
	hook  *message.Received
	stop  bool
	asked int
	// remembered are the unaddressed group messages.
	remembered []string
	// logs is what the stage logged.
	logs bytes.Buffer
	now  func() time.Time
}

func (f *fakes) IsApproved(_ context.Context, instance, sender string, _ time.Duration) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.approved[instance+":"+sender], nil
}

func (f *fakes) RequestPairing(_ context.Context, req store.PairingRequest) (store.PairingResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pairingErr != nil {
		return store.PairingResponse{}, f.pairingErr
	}
	from := req.Instance + ":" + req.SenderID
	if c, ok := f.pending[from]; ok {
		return store.PairingResponse{Code: c}, nil
	}
	now := f.now()
	c := store.PairingCode{Code: "PAIR" + req.SenderID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	f.pending[from] = c
	return store.PairingResponse{Code: c, Created: true}, nil
}

func (f *fakes) Audit(_ context.Context, e store.AuditEvent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.audits = append(f.audits, e)
	return nil
}

func (f *fakes) Claim(entry, code string) (ownerclaim.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	switch {
	case f.used || f.code == "":
		return ownerclaim.NoClaim, nil
	case !strings.EqualFold(code, f.code):
		return ownerclaim.WrongCode, nil
	}
	f.used = true
	return ownerclaim.Claimed, nil
}

func (f *fakes) Answer(m *message.Message, owner bool) (bool, string) {
	if !f.question || strings.TrimSpace(m.Body) != "yes" {
		return false, ""
	}
	return true, f.reply
}

func (f *fakes) Decide(_ context.Context, _ received.Settings, _ int64, _ sessionkey.Key, m *message.Message) received.Verdict {
	if m.Received != nil {
		return received.Verdict{Drop: m.Received.Dropped, Reason: m.Received.Reason}
	}
	if f.stop {
		return received.Verdict{Stopped: true}
	}
	if f.hook == nil {
		return received.Verdict{}
	}
	f.asked++
	r := *f.hook
	m.Received = &r
	if !r.Dropped {
		m.Body = strings.ToUpper(m.Body)
	}
	return received.Verdict{Drop: r.Dropped, Reason: r.Reason}
}

func (f *fakes) Remember(m *message.Message, mayTrigger bool) {
	f.remembered = append(f.remembered, m.Body)
}

func (f *fakes) Dropped(_, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropped = append(f.dropped, reason)
}

// step is one message and the verdict it must get; advance moves the
// clock before it.
type step struct {
	advance time.Duration
	m       message.Message
	want    Verdict
	// body, when set, is the message's body after the decision.
	body string
}

func dm(id, body string) message.Message {
	return message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatDirect, ChatID: id, MessageID: "m",
		Sender: channel.Sender{ID: id, Name: "User " + id}, From: "tg:" + id, To: "tg:" + id, Body: body}
}

func group(chat, sender, body string, mentioned bool) message.Message {
	return message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatGroup, ChatID: chat, MessageID: "g",
		Sender: channel.Sender{ID: sender}, From: "tg:" + sender, To: "tg:" + chat, Body: body, WasMentioned: mentioned, ChatTitle: "the group"}
}

func with(m message.Message, f func(*message.Message)) message.Message {
	f(&m)
	return m
}

func pass() Verdict { return Verdict{Kind: Pass} }

// TestDecide: every rule of the stage, each a sequence of messages over
// recording ports and a fake clock.
func TestDecide(t *testing.T) {
	t.Parallel()
	allow := access.Policy{DMPolicy: access.PolicyAllowlist, AllowFrom: []string{"tg:1"}, Owners: []string{"tg:9"},
		GroupPolicy: access.PolicyAllowlist, Groups: []string{"tg:-100"}, RequireMention: true, GroupAllowFrom: []string{"tg:1"}}
	pairing := allow
	pairing.DMPolicy = access.PolicyPairing
	cases := []struct {
		name  string
		set   Settings
		ports func(*fakes)
		steps []step
		check func(t *testing.T, f *fakes, s *Stage)
	}{
		{name: "admitted sender passes", set: Settings{Access: allow}, steps: []step{{m: dm("1", "hello"), want: pass()}}},
		{name: "oversize admitted is told", set: Settings{Access: allow}, steps: []step{
			{m: with(dm("1", ""), func(m *message.Message) { m.OversizeBytes = 9 << 20 }), want: answer("(Your message was too large to handle (9.0 MiB; at most 8 MiB get through) and was skipped. Please send it in smaller parts, or as a file.)")},
			{m: with(dm("2", ""), func(m *message.Message) { m.OversizeBytes = 9 << 20 }), want: drop(store.StateDropped, "too large")},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if !slices.Equal(f.dropped, []string{"too large", "too large"}) {
				t.Errorf("dropped %q", f.dropped)
			}
		}},
		{name: "empty is dropped", set: Settings{Access: allow}, steps: []step{{m: dm("1", "  "), want: drop(store.StateDropped, "empty")}}},
		{name: "scheduled runs without access", set: Settings{Access: allow}, steps: []step{
			{m: with(dm("77", "the report"), func(m *message.Message) { m.Scheduled = "daily" }), want: Verdict{Kind: Run}},
		}},
		{name: "stranger under allowlist is refused once an hour", set: Settings{Access: allow}, steps: []step{
			{m: dm("5", "hi"), want: answer("You are not allowed to talk to this bot. Your id is tg:5; an owner can add it to access.allow_from.")},
			{m: dm("5", "hi again"), want: drop(store.StateDropped, "not allowed")},
			{advance: time.Hour, m: dm("5", "a later hi"), want: answer("You are not allowed to talk to this bot. Your id is tg:5; an owner can add it to access.allow_from.")},
		}},
		{name: "whoami answers a stranger", set: Settings{Access: allow}, steps: []step{
			{m: dm("5", "/whoami"), want: answer(`You are tg:5. To allow you, an owner adds "tg:5" to access.allow_from.`)},
		}},
		{name: "whoami in an unlisted group when addressed", set: Settings{Access: allow}, steps: []step{
			{m: group("-7", "1", "/whoami", true), want: answer(`You are tg:1. This group is tg:-7. The agent does not answer here: to allow this group, an owner adds "tg:-7" to access.groups.`)},
			{m: group("-7", "1", "/whoami", false), want: drop(store.StateDropped, "group not allowed")},
		}},
		{name: "no whoami where groups are disabled", set: Settings{Access: func() access.Policy { p := allow; p.GroupPolicy = access.PolicyDisabled; return p }()}, steps: []step{
			{m: group("-100", "1", "/whoami", true), want: drop(store.StateDropped, "group not allowed")},
		}},
		{name: "unlisted group is dropped and listed", set: Settings{Access: allow}, steps: []step{
			{m: group("-7", "1", "hello", true), want: drop(store.StateDropped, "group not allowed")},
		}, check: func(t *testing.T, _ *fakes, s *Stage) {
			if u := s.Unlisted(); len(u) != 1 || u[0].ID != "tg:-7" {
				t.Errorf("unlisted %+v", u)
			}
			p := allow
			p.Groups = append(slices.Clone(p.Groups), "tg:-7")
			s.Forget(context.Background(), p)
			if u := s.Unlisted(); len(u) != 0 {
				t.Errorf("unlisted after the group was listed %+v", u)
			}
		}},
		{name: "unaddressed group message is history", set: Settings{Access: allow}, steps: []step{
			{m: group("-100", "1", "just talking", false), want: drop(store.StateDone, "group message not addressed to the bot")},
			{m: group("-100", "1", "hey bot", true), want: pass()},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if !slices.Equal(f.remembered, []string{"just talking"}) {
				t.Errorf("remembered %q", f.remembered)
			}
		}},
		{name: "a bare command in a group is addressed to the bot", set: Settings{Access: allow}, steps: []step{
			{m: group("-100", "1", "/usage", false), want: pass()},
			{m: group("-100", "1", "/usage@another_bot", false), want: drop(store.StateDone, "group message not addressed to the bot")},
			{m: group("-100", "1", "/nosuchcommand", false), want: drop(store.StateDone, "group message not addressed to the bot")},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if !slices.Equal(f.remembered, []string{"/usage@another_bot", "/nosuchcommand"}) {
				t.Errorf("remembered %q", f.remembered)
			}
		}},
		{name: "a command from a sender who may not trigger is logged", set: Settings{Access: allow}, steps: []step{
			{m: group("-100", "5", "/usage", false), want: drop(store.StateDone, "group message not addressed to the bot")},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if l := f.logs.String(); !strings.Contains(l, "a command in a group from a sender who may not trigger the agent there gets no answer") ||
				!strings.Contains(l, "command=/usage") || !strings.Contains(l, "sender=tg:5") {
				t.Errorf("log %q", l)
			}
		}},
		{name: "pairing holds a stranger once", set: Settings{Access: pairing}, steps: []step{
			{m: dm("5", "let me in"), want: Verdict{Kind: Hold, Text: "This bot does not know you yet. Your pairing code is PAIR5 (valid for 1 hour). Ask the owner to approve it: clawhost pairing approve PAIR5"}},
			{m: dm("5", "hello?"), want: drop(store.StateDropped, "awaiting pairing approval")},
		}},
		{name: "an approved sender passes", set: Settings{Access: pairing}, ports: func(f *fakes) { f.approved = map[string]bool{"tg:5": true} }, steps: []step{
			{m: dm("5", "hello"), want: pass()},
		}},
		{name: "too many pending pairings", set: Settings{Access: pairing}, ports: func(f *fakes) { f.pairingErr = store.ErrTooManyPending }, steps: []step{
			{m: dm("5", "hi"), want: answer("This bot is handling other access requests right now. Please write again later to get a pairing code.")},
			{m: dm("5", "hi"), want: drop(store.StateDropped, "too many pending pairings")},
		}},
		{name: "a failing pairing store fails the entry", set: Settings{Access: pairing}, ports: func(f *fakes) { f.pairingErr = errors.New("disk on fire") }, steps: []step{
			{m: dm("5", "hi"), want: drop(store.StateFailed, "pairing failed")},
		}},
		{name: "owner claim", set: Settings{Access: allow}, ports: func(f *fakes) { f.code = "ABCD2345" }, steps: []step{
			{m: dm("5", "/owner WRONG234"), want: answer(OwnerRefused)},
			{m: dm("5", "/owner WRONG567"), want: drop(store.StateDropped, "owner claim refused")},
			{m: dm("5", "/owner abcd2345"), want: answer(OwnerClaimed)},
			{advance: time.Minute, m: dm("6", "/owner ABCD2345"), want: answer(OwnerRefused)},
			{m: group("-100", "1", "/owner ABCD2345", true), want: pass()},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if !slices.Equal(f.owners, []string{"tg:5"}) || f.claims != 4 {
				t.Errorf("owners %q after %d claims", f.owners, f.claims)
			}
			var decisions []string
			for _, a := range f.audits {
				decisions = append(decisions, a.Subject+" "+a.Decision)
			}
			if want := []string{"tg:5 refused", "tg:5 refused", "tg:5 owner claimed", "tg:6 refused"}; !slices.Equal(decisions, want) {
				t.Errorf("audit %q, want %q", decisions, want)
			}
		}},
		{name: "flood limit", set: Settings{Access: allow, Rate: Rate{N: 2, Per: time.Minute}}, steps: []step{
			{m: dm("1", "a"), want: pass()},
			{m: dm("1", "b"), want: pass()},
			{m: dm("1", "c"), want: answer("You are sending messages faster than this bot takes them (at most 2 a minute). Messages over the limit are not passed to claude — wait a moment and send again.")},
			{m: dm("1", "d"), want: drop(store.StateDropped, "rate limited")},
			{m: dm("9", "the owner has a bucket of their own"), want: pass()},
			{advance: time.Minute, m: dm("1", "e"), want: pass()},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if len(f.audits) != 1 || f.audits[0].Kind != store.AuditRate || f.audits[0].Subject != "tg:1" {
				t.Errorf("audit %+v", f.audits)
			}
		}},
		{name: "answer to a tool-use question", set: Settings{Access: allow}, ports: func(f *fakes) { f.question = true }, steps: []step{
			{m: dm("1", "yes"), want: drop(store.StateDone, "answer to a tool-use question")},
			{m: dm("1", "no idea"), want: pass()},
		}},
		{name: "answer to a tool-use question with a reply", set: Settings{Access: allow}, ports: func(f *fakes) { f.question, f.reply = true, "Only an owner can answer." }, steps: []step{
			{m: dm("1", "yes"), want: answer("Only an owner can answer.")},
		}},
		{name: "another button stands for its id typed", set: Settings{Access: allow}, steps: []step{
			{m: with(dm("1", "pressed"), func(m *message.Message) { m.Action = &channel.Action{ButtonID: "/report week"} }), want: pass(), body: "/report week"},
		}},
		{name: "message_received hooks amend", set: Settings{Access: allow}, ports: func(f *fakes) {
			f.hook = &message.Received{Hooks: []string{"voice"}, Steps: []string{"transcribed", "tagged"}}
		}, steps: []step{
			{m: dm("1", "hello"), want: Verdict{Kind: Pass, Amended: true}, body: "HELLO"},
			// A decision already recorded (a restart) is not an amendment.
			{m: with(dm("1", "HELLO"), func(m *message.Message) { m.Received = &message.Received{Hooks: []string{"voice"}} }), want: pass()},
		}, check: func(t *testing.T, f *fakes, _ *Stage) {
			if f.asked != 1 || !slices.Equal(f.steps, []string{"agent:main:k transcribed · tagged"}) {
				t.Errorf("asked %d, steps %q", f.asked, f.steps)
			}
		}},
		{name: "message_received hook drops", set: Settings{Access: allow}, ports: func(f *fakes) {
			f.hook = &message.Received{Hooks: []string{"spam"}, Dropped: true, Reason: "No spam here."}
		}, steps: []step{
			{m: dm("1", "buy now"), want: answer("No spam here.")},
		}},
		{name: "stopping while hooks are asked leaves the entry", set: Settings{Access: allow}, ports: func(f *fakes) { f.stop = true }, steps: []step{
			{m: dm("1", "hello"), want: Verdict{Kind: Leave}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := tstimetest.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
			f := &fakes{pending: map[string]store.PairingCode{}, now: clk.Now}
			if c.ports != nil {
				c.ports(f)
			}
			s := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &f.logs, Level: hclog.Debug}), Now: clk.Now, Pairing: f, Auditor: f, OwnerClaims: f, Approvals: f, Received: f, Commands: command.NewRegistry(command.Builtins),
				History: f, Observer: f, OnOwner: func(s string) { f.owners = append(f.owners, s) },
				OnSteps: func(key, steps string) { f.steps = append(f.steps, key+" "+steps) }})
			for i, st := range c.steps {
				clk.Advance(st.advance)
				m := st.m
				got := s.Decide(context.Background(), c.set, Entry{ID: int64(i + 1), Key: sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "k"}, Message: &m})
				got.Code = store.PairingCode{}
				if got != st.want {
					t.Errorf("step %d (%q): %+v, want %+v", i, st.m.Body, got, st.want)
				}
				if st.body != "" && m.Body != st.body {
					t.Errorf("step %d: body %q after the decision, want %q", i, m.Body, st.body)
				}
			}
			if c.check != nil {
				c.check(t, f, s)
			}
		})
	}
}

// A held sender's verdict carries the code the store gave.
func TestHoldCarriesTheCode(t *testing.T) {
	t.Parallel()
	f := &fakes{pending: map[string]store.PairingCode{}, now: time.Now}
	s := New(Options{Pairing: f, Auditor: f, Approvals: f, Received: f, Commands: command.NewRegistry(command.Builtins), History: f})
	m := dm("5", "hi")
	v := s.Decide(context.Background(), Settings{Access: access.Policy{DMPolicy: access.PolicyPairing}}, Entry{ID: 1, Key: sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "k"}, Message: &m})
	if v.Kind != Hold || v.Code.Code != "PAIR5" || !strings.Contains(v.Text, "PAIR5") {
		t.Errorf("verdict %+v", v)
	}
}

// A reload that changes access.rate starts every bucket full.
func TestRateChangeRefillsBuckets(t *testing.T) {
	t.Parallel()
	f := &fakes{pending: map[string]store.PairingCode{}, now: time.Now}
	clk := tstimetest.NewFake(time.Now())
	s := New(Options{Now: clk.Now, Pairing: f, Auditor: f, Approvals: f, Received: f, Commands: command.NewRegistry(command.Builtins), History: f})
	set := Settings{Access: access.Policy{DMPolicy: access.PolicyOpen}, Rate: Rate{N: 1, Per: time.Hour}}
	decide := func() Kind {
		m := dm("1", "hi")
		return s.Decide(context.Background(), set, Entry{ID: 1, Key: sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "k"}, Message: &m}).Kind
	}
	if k1, k2 := decide(), decide(); k1 != Pass || k2 != Answer {
		t.Fatalf("under 1 an hour: %v, %v", k1, k2)
	}
	set.Rate.N = 2
	if k := decide(); k != Pass {
		t.Errorf("after the reload: %v", k)
	}
}

func TestOwnerCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body, code string
		ok         bool
	}{
		{"/owner ABCD2345", "ABCD2345", true},
		{"  /owner   abcd2345 ", "abcd2345", true},
		{"/owner@clawbot ABCD2345", "ABCD2345", true},
		{"/owner", "", false},
		{"/owner A B", "", false},
		{"/owners ABCD2345", "", false},
		{"owner ABCD2345", "", false},
	} {
		code, ok := ownerCode(c.body)
		if code != c.code && c.ok || ok != c.ok {
			t.Errorf("ownerCode(%q) = %q, %v; want %q, %v", c.body, code, ok, c.code, c.ok)
		}
	}
}

// /whoami tells an allowed sender they are allowed (not how to get
// allowed), a stranger the allow_from line, and in a group the group's id.
func TestWhoamiText(t *testing.T) {
	t.Parallel()
	dmMsg := &message.Message{From: "tg:42", To: "tg:42", ChatType: channel.ChatDirect}
	if got := whoami(dmMsg, access.Admit, true); !strings.Contains(got, "You are tg:42.") || strings.Contains(got, "To allow you") || !strings.Contains(got, "You may talk") {
		t.Errorf("allowed: %q", got)
	}
	if got := whoami(dmMsg, access.Refuse, true); !strings.Contains(got, `adds "tg:42" to access.allow_from`) {
		t.Errorf("stranger: %q", got)
	}
	if got := whoami(&message.Message{From: "tg:42", To: "tg:-5", ChatType: channel.ChatGroup}, access.IgnoreGroup, false); !strings.Contains(got, `adds "tg:-5" to access.groups`) || strings.Contains(got, "allow_from") {
		t.Errorf("unlisted group: %q", got)
	}
	grp := &message.Message{From: "tg:42", To: "tg:-1001234", ChatType: channel.ChatGroup}
	if got := whoami(grp, access.Unaddressed, true); !strings.Contains(got, "This group is tg:-1001234.") || !strings.Contains(got, "You may talk") {
		t.Errorf("group: %q", got)
	}
	// A member listed nowhere learns that they are context only, and how
	// an owner would let them in.
	if got := whoami(grp, access.Unaddressed, false); strings.Contains(got, "You may talk") || !strings.Contains(got, `adds "tg:42" to access.group_allow_from`) {
		t.Errorf("group member listed nowhere: %q", got)
	}
}
