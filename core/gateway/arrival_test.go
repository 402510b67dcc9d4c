package gateway

// In-process tests of how the gateway acts on core/admission's verdicts
// (the rules themselves are table-tested there): the answer goes through
// the outbox, a held message is answered once an owner approves, a drop
// sends nothing. "Nothing was sent" is shown by order, not by waiting: a
// conversation's arrivals are decided one after another, so the next
// send to the chat answers the message after the dropped one.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// pairingPolicy admits tg:1 and the owner tg:9 in direct chats; others pair.
func pairingPolicy(s *Settings) {
	s.Access = access.Policy{DMPolicy: access.PolicyPairing, AllowFrom: []string{"tg:1"}, Owners: []string{"tg:9"}}
	s.Approval.DirectChats = map[string]bool{"tg": true}
}

// TestPairing: a stranger gets a code once (writing again while it is
// pending is not answered), the owner is told in their direct chat with
// the commands to type, /whoami works for the stranger, a non-owner cannot
// approve; the owner's approval tells the stranger and answers the message
// that asked, and the stranger is admitted from then on. The code is never
// logged.
func TestPairing(t *testing.T) {
	logBuf := &sdktest.Log{}
	g, ports, _ := inproc(t, pairingPolicy, func(o *Options) {
		o.Logger = hclog.New(&hclog.LoggerOptions{Output: logBuf, Level: hclog.Debug})
	})
	ctx := context.Background()
	post := func(id, text string) {
		t.Helper()
		sendDM(t, ctx, g, id, text)
	}
	seen5, seen9, seen1 := 0, 0, 0
	post("5", "let me in")
	got := ports.next(t, "5", &seen5)
	if !strings.Contains(got, "pairing code") || !strings.Contains(got, "clawhost pairing approve") {
		t.Fatalf("the stranger's answer: %q", got)
	}
	code := got[strings.Index(got, "code is ")+8:]
	code = code[:strings.IndexByte(code, ' ')]
	if told := ports.next(t, "9", &seen9); !strings.Contains(told, "asks to talk to the bot (tg:5, on tg; code "+code) || !strings.Contains(told, "Reply /approve "+code+" or /deny "+code) {
		t.Errorf("the owner was told %q", told)
	}
	// Writing again while the code is pending is not answered: the next
	// thing chat 5 is sent answers its /whoami.
	post("5", "hello?")
	post("5", "/whoami")
	if got := ports.next(t, "5", &seen5); !strings.Contains(got, "You are tg:5.") {
		t.Fatalf("after the pending code, chat 5 was sent %q", got)
	}
	post("1", "/approve "+code)
	if got := ports.next(t, "1", &seen1); !strings.Contains(got, "Only an owner") {
		t.Errorf("a non-owner's /approve: %q", got)
	}
	post("9", "/approve "+code)
	if got := ports.next(t, "9", &seen9); !strings.Contains(got, "Approved tg:5") {
		t.Fatalf("the owner's /approve: %q", got)
	}
	// The stranger is told, and the message that asked is answered (two
	// sends of two sessions: in either order).
	a, b := ports.next(t, "5", &seen5), ports.next(t, "5", &seen5)
	if strings.HasPrefix(a, "re: ") {
		a, b = b, a
	}
	if !strings.Contains(a, "An owner approved you") || !strings.HasPrefix(b, "re: ") || !strings.Contains(b, "let me in") {
		t.Errorf("after the approval chat 5 was sent %q and %q", a, b)
	}
	post("5", "now?")
	if got := ports.next(t, "5", &seen5); !strings.HasPrefix(got, "re: ") || !strings.Contains(got, "now?") {
		t.Errorf("the approved sender: %q", got)
	}
	if strings.Contains(logBuf.String(), code) {
		t.Errorf("the pairing code %s is in the log", code)
	}
}

// TestPairingApprovalAcrossRestart: the host died after recording an
// owner's approval and before it journaled the held message's copy (the
// approval is in the store, the hold's lease too, nothing else): the next
// start tells the sender once and answers the held message once; the start
// after that does neither again. Before answerApprovedHolds the held
// message was never answered (the e2e TestPairingApprovalAcrossKill9 lost
// it at its in-flight point).
func TestPairingApprovalAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	g, ports, _, stop := inprocAt(t, dir, pairingPolicy)
	sendDM(t, ctx, g, "5", "let me in")
	seen5 := 0
	got := ports.next(t, "5", &seen5)
	code := got[strings.Index(got, "code is ")+8:]
	code = code[:strings.IndexByte(code, ' ')]
	// What /approve records before it calls PairingApproved; the host
	// dies there.
	if _, err := g.store.ApprovePairing(ctx, store.ApproveRequest{Code: code, By: "tg:9"}); err != nil {
		t.Fatal(err)
	}
	stop()

	g, ports, _, stop = inprocAt(t, dir, pairingPolicy)
	seen5 = 0
	a, b := ports.next(t, "5", &seen5), ports.next(t, "5", &seen5)
	if strings.HasPrefix(a, "re: ") {
		a, b = b, a
	}
	if !strings.Contains(a, "An owner approved you") || !strings.HasPrefix(b, "re: ") || !strings.Contains(b, "let me in") {
		t.Fatalf("after the restart chat 5 was sent %q and %q", a, b)
	}
	stop()

	// Once: the next start sends nothing of it again, so the next thing
	// chat 5 is sent answers a new message.
	g, ports, _, _ = inprocAt(t, dir, pairingPolicy)
	sendDM(t, ctx, g, "5", "now?")
	seen5 = 0
	if got := ports.next(t, "5", &seen5); !strings.HasPrefix(got, "re: ") || !strings.Contains(got, "now?") {
		t.Errorf("after the second restart chat 5 was sent %q first", got)
	}
}

// TestPairingFullTellsNewcomersToTryLater: when every pairing slot is
// taken, a newcomer is told to try later, once an hour, not left in
// silence.
func TestPairingFullTellsNewcomersToTryLater(t *testing.T) {
	clk := tstimetest.NewFake(time.Now())
	drops := dropRec{nopObserver{}, make(chan string, 16)}
	g, ports, _ := inproc(t, pairingPolicy, func(o *Options) { o.Now, o.Observer = clk.Now, drops })
	ctx := context.Background()
	post := func(id, text string) {
		t.Helper()
		sendDM(t, ctx, g, id, text)
	}
	for _, s := range []string{"11", "12", "13"} {
		post(s, "hi")
		seen := 0
		if got := ports.next(t, s, &seen); !strings.Contains(got, "pairing code") {
			t.Fatalf("sender %s: %q", s, got)
		}
	}
	seen := 0
	post("14", "hi")
	if got := ports.next(t, "14", &seen); !strings.Contains(got, "write again later") {
		t.Fatalf("the newcomer: %q", got)
	}
	// Within the hour: not told again. An hour later: told again, and
	// that is the next thing the chat is sent.
	post("14", "hello?")
	for range 5 { // the three codes, the newcomer's two messages
		select {
		case <-drops.drops:
		case <-time.After(10 * time.Second): // a bound on a failing test
			t.Fatal("the newcomer's second message was not decided")
		}
	}
	clk.Advance(time.Hour)
	post("14", "still there?")
	if got := ports.next(t, "14", &seen); !strings.Contains(got, "write again later") {
		t.Fatalf("an hour later: %q", got)
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	n := 0
	for _, r := range ports.sent {
		if r.ChatID == "14" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the newcomer was sent %d messages, want 2", n)
	}
}

// TestGroupMentionAndHistory: in a listed group, messages not addressed to
// the bot, or from a member who may not trigger it, are not answered but
// kept as context, marked untrusted, for the next turn there; a group not
// listed is ignored even with a mention, shown to the operator, and
// answers /whoami with the id to list.
func TestGroupMentionAndHistory(t *testing.T) {
	g, ports, agent := inproc(t, func(s *Settings) {
		s.Access.AllowFrom, s.Access.Groups, s.Access.RequireMention, s.Access.GroupAllowFrom = []string{"tg:1"}, []string{"tg:g1"}, true, []string{"tg:c"}
		s.Turn.GroupHistoryLimit = 50
	})
	agent.mu.Lock()
	agent.whole = true
	agent.mu.Unlock()
	ctx := context.Background()
	post := func(chat, title, sender, text string, mentioned bool) {
		t.Helper()
		m := dmFrom(sender, text)
		m.ChatType, m.ChatID, m.ChatTitle, m.WasMentioned = channel.ChatGroup, chat, title, mentioned
		if err := g.Inbound(ctx, "tg", []channel.InboundMessage{m}); err != nil {
			t.Fatal(err)
		}
	}
	post("g1", "The Group", "a", "first unaddressed", false)
	post("g1", "The Group", "b", "second unaddressed", true) // mentioned, but b is named nowhere: context only
	post("g1", "The Group", "c", "@bot what do you think?", true)
	seen := 0
	got := ports.next(t, "g1", &seen)
	for _, w := range []string{"[Chat messages since your last reply - for context]", "first unaddressed", "second unaddressed", "[Current message - respond to this]", "what do you think?"} {
		if !strings.Contains(got, w) {
			t.Fatalf("the first send to the group lacks %q: %q", w, got)
		}
	}
	if i, j := strings.Index(got, "<<<EXTERNAL_UNTRUSTED_CONTENT"), strings.Index(got, "first unaddressed"); i < 0 || i > j || !strings.Contains(got, "Source: Chat history") {
		t.Errorf("history not marked untrusted: %q", got)
	}
	post("g2", "Other", "a", "hi", true)
	post("g2", "", "a", "/whoami", true)
	seen2 := 0
	if got := ports.next(t, "g2", &seen2); !strings.Contains(got, "This group is tg:g2.") || !strings.Contains(got, `adds "tg:g2" to access.groups`) {
		t.Errorf("the first send to the unlisted group: %q", got)
	}
	if u := g.UnlistedGroups(); len(u) != 1 || u[0].ID != "tg:g2" || u[0].Title != "Other" || u[0].Messages != 1 {
		t.Errorf("unlisted groups %+v", u)
	}
}

// dropRec is an Observer that reports each message not passed on.
type dropRec struct {
	nopObserver
	drops chan string
}

func (d dropRec) Dropped(_, reason string) { d.drops <- reason }
