package gateway

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/agents"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
)

func TestSessionKeys(t *testing.T) {
	cases := []struct {
		scope sessionkey.DMScope
		m     message.Message
		want  string
	}{
		{"", message.Message{Instance: "tg", ChatType: "direct", ChatID: "5", Sender: senderID("5")}, "tg:direct:5"},
		{sessionkey.PerPeer, message.Message{Instance: "tg", Channel: "telegram", ChatType: "direct", ChatID: "5", Sender: senderID("5")}, "direct:telegram:5"},
		// Equal ids on two platforms are two people.
		{sessionkey.PerPeer, message.Message{Instance: "wa", Channel: "whatsapp", ChatType: "direct", ChatID: "5", Sender: senderID("5")}, "direct:whatsapp:5"},
		{sessionkey.Main, message.Message{Instance: "tg", ChatType: "direct", ChatID: "5", Sender: senderID("5")}, "main"},
		{sessionkey.Main, message.Message{Instance: "tg", ChatType: "group", ChatID: "-100", Sender: senderID("5")}, "tg:group:-100"},
		{"", message.Message{Instance: "tg", ChatType: "group", ChatID: "-100", ThreadID: "7", Sender: senderID("5")}, "tg:group:-100:thread:7"},
		{"", message.Message{Instance: "dc", ChatType: "channel", ChatID: "c1", Sender: senderID("5")}, "dc:channel:c1"},
	}
	for _, c := range cases {
		if got := agents.BoundKey(Settings{DMScope: c.scope}.routing(), &c.m).String(); got != "agent:main:"+c.want {
			t.Errorf("scope %q %+v: %q, want %q", c.scope, c.m, got, c.want)
		}
	}
	// session.identity_links: one person on two instances, one session.
	links := map[string][]string{"alice": {"tg:5", "dc:9"}}
	set := Settings{DMScope: sessionkey.PerPeer, IdentityLinks: links}
	tg := message.Message{Instance: "tg", ChatType: "direct", ChatID: "5", Sender: senderID("5")}
	dc := message.Message{Instance: "dc", ChatType: "direct", ChatID: "d9", Sender: senderID("9")}
	if a, b := agents.BoundKey(set.routing(), &tg).String(), agents.BoundKey(set.routing(), &dc).String(); a != "agent:main:direct:alice" || b != a {
		t.Errorf("linked keys %q, %q", a, b)
	}
	// The agent a chat is bound to scopes its key; a thread bound to
	// another agent is that agent's session.
	set = Settings{Agents: routes{"tg:-100": "ops", "tg:-100:7": "docs"}}
	for _, c := range []struct {
		m    message.Message
		want string
	}{
		{message.Message{Instance: "tg", ChatType: "group", ChatID: "-100", Sender: senderID("5")}, "agent:ops:tg:group:-100"},
		{message.Message{Instance: "tg", ChatType: "group", ChatID: "-100", ThreadID: "7", Sender: senderID("5")}, "agent:docs:tg:group:-100:thread:7"},
		{message.Message{Instance: "tg", ChatType: "direct", ChatID: "5", Sender: senderID("5")}, "agent:main:tg:direct:5"},
	} {
		if got := agents.BoundKey(set.routing(), &c.m).String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.m, got, c.want)
		}
	}
}

// routes is an AgentRouter over "<instance>:<chat>[:<thread>]" entries,
// the most specific first.
type routes map[string]string

func (r routes) Resolve(instance, chat, thread string) (string, bool) {
	if a, ok := r[instance+":"+chat+":"+thread]; ok && thread != "" {
		return a, true
	}
	if a, ok := r[instance+":"+chat]; ok {
		return a, true
	}
	return "main", false
}

func TestIdleResetPolicyStartsNewSession(t *testing.T) {
	var offset atomic.Int64
	idle := 1.0
	e := newLo(t, loOptions{settings: func(s *Settings) {
		s.Turn.Reset = sessionreset.Config{Default: &sessionreset.Rule{Mode: sessionreset.ModeIdle, IdleMinutes: &idle}}
	}, now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	e.post(dm("u1", "one"))
	e.text("chat-u1")
	s1, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	e.post(dm("u1", "two"))
	e.text("chat-u1")
	s2, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	if s1.SessionID != s2.SessionID {
		t.Fatalf("a session within the idle window must continue")
	}
	offset.Store(int64(2 * time.Minute))
	e.post(dm("u1", "three"))
	e.text("chat-u1")
	s3, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	if s3.SessionID == s2.SessionID || s3.ClaudeSessionID == s2.ClaudeSessionID {
		t.Fatalf("idle session not reset")
	}
}

func TestTriggerWordsAndTyping(t *testing.T) {
	e := newLo(t, loOptions{settings: func(s *Settings) {
		s.Access.TriggerWords = []string{"claw"}
		s.Turn.ResponsePrefix = "[bot]"
	}})
	e.ports.typing = true
	e.post(in{"chat_id": "g1", "chat_type": "group", "sender_id": "u1", "text": "clawhost is nice"})
	// The next send to g1 answers the trigger word (nothing before it: quiet).
	e.post(in{"chat_id": "g1", "chat_type": "group", "sender_id": "u1", "text": "hey Claw, answer"})
	reply := e.text("g1")
	contains(t, reply, "[bot] echo: ", "hey Claw, answer")
	e.ports.waitTyping(t, "g1", false) // the indicator goes off as the turn ends
	var sawTypingOn, sawTypingOff bool
	e.ports.mu.Lock()
	for _, r := range e.ports.typed {
		sawTypingOn = sawTypingOn || r.On
		sawTypingOff = sawTypingOff || !r.On
	}
	e.ports.mu.Unlock()
	if !sawTypingOn || !sawTypingOff {
		t.Errorf("typing on %v off %v", sawTypingOn, sawTypingOff)
	}
}

func TestQueueDropNew(t *testing.T) {
	e := newLo(t, loOptions{settings: func(s *Settings) { s.Queue.Cap = 1; s.Queue.Drop = queue.DropNew }})
	hold, release := e.hold()
	e.post(dm("u1", "busy "+hold))
	e.running()
	e.post(dm("u1", "kept"))
	e.post(dm("u1", "dropped"))
	// The chat is told of the drop (at once, while "busy" runs: the notice
	// is the event that says both were queued) and then gets the two
	// answers.
	notice := e.text("chat-u1")
	release()
	got := strings.Join([]string{notice, e.text("chat-u1"), e.text("chat-u1")}, "\n---\n")
	contains(t, got, "busy", "kept", "not answered: more than 1 were waiting, so the newest were skipped")
	if strings.Contains(got, "User u1: dropped") {
		t.Errorf("newest message should be dropped: %q", got)
	}
	if i, j := strings.Index(got, "User u1: busy"), strings.Index(got, "User u1: kept"); i < 0 || j < i {
		t.Errorf("answers out of order: %q", got)
	}
	e.quiet("chat-u1", dm("u1", "after the drop"))
}
