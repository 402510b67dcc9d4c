package gateway

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestDirectMessageReachesAgentInEnvelope(t *testing.T) {
	e := newLo(t, loOptions{})
	e.post(dm("u1", "hello there"))
	got := e.text("chat-u1")
	contains(t, got, "echo: ", "[Loopback User u1", "hello there")
}

func TestDedupe(t *testing.T) {
	e := newLo(t, loOptions{})
	m := dm("u1", "once")
	m["message_id"] = "same-id"
	e.post(m)
	e.post(m)
	contains(t, e.text("chat-u1"), "once")
	e.quiet("chat-u1", dm("u1", "after the duplicate"))
}

func TestResetTriggers(t *testing.T) {
	e := newLo(t, loOptions{})
	e.post(dm("u1", "one"))
	e.text("chat-u1")
	s1, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	e.post(dm("u1", "/new"))
	contains(t, e.text("chat-u1"), "New session started")
	e.post(dm("u1", "/reset hello again"))
	got := e.text("chat-u1")
	contains(t, got, "echo: ", "User u1: hello again", "System: The user started a new conversation (/reset)")
	if strings.Contains(got, "/reset hello") {
		t.Errorf("the trigger should be stripped: %q", got)
	}
	s2, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	if s1.ClaudeSessionID == "" || s1.ClaudeSessionID == s2.ClaudeSessionID {
		t.Errorf("claude session not renewed: %q → %q", s1.ClaudeSessionID, s2.ClaudeSessionID)
	}
}

func TestBuiltinCommands(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.post(dm("u1", "hi"))
	e.text("chat-u1")
	e.post(dm("u1", "/status"))
	s, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	// The claude session id, as the runner's log lines show it.
	contains(t, e.text("chat-u1"), "Session: agent:main:lo:direct:u1", "Claude session: "+s.ClaudeSessionID, "Model: claude-fake-1", "Turns: 1", "Cost: $0.0125", "Last turn: no wait, started claude", "(no warm process)", "Agent: main, ", "0 queued", "Uptime")
	e.post(dm("u1", "/help"))
	contains(t, e.text("chat-u1"), "/new", "/status", "/stop", "/whoami")
	e.post(dm("u1", "/stop"))
	contains(t, e.text("chat-u1"), "Nothing is running")
	e.post(dm("u1", "/unknowncmd x"))
	contains(t, e.text("chat-u1"), "echo: ", "/unknowncmd x")
}

func TestVerboseToggle(t *testing.T) {
	e := newLo(t, loOptions{})
	e.post(dm("u1", "/verbose"))
	contains(t, e.text("chat-u1"), "will be shown")
	e.post(dm("u1", "/verbose off"))
	contains(t, e.text("chat-u1"), "will not be shown")
}

// TestTurnWaitsForAStartingHook: the first message after a start is
// answered with the hook's context even when the hook plugin becomes ready
// after the channel (here it starts 1.5 s late, behind a shell wrapper).
func TestTurnWaitsForAStartingHook(t *testing.T) {
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow-clock-hook")
	script := "#!/bin/sh\nsleep 1.5\nexec " + filepath.Join(filepath.Dir(loopbackBin), "clawhost-clock-hook") + " \"$@\"\n"
	sdktest.WriteExecutable(t, slow, []byte(script), 0o700)
	e := newEnv(t, envOptions{
		settings: func(s *Settings) { s.Turn.HookOrder = []string{"lo", "clock"} },
		extra: []pluginhost.Spec{{Instance: "clock", Source: "clock-hook", Path: slow, DataDir: filepath.Join(dir, "clock"), Fingerprint: "clock",
			Decode: func(schema.Schema) ([]byte, error) { return []byte(`{"timezone":"UTC"}`), nil }}},
	})
	e.post(dm("u1", "first after start"))
	contains(t, e.text("chat-u1"), "first after start", "Current date and time")
}

// TestCommandWaitsForAStartingCommandPlugin: "/ping" sent while the ping
// plugin is still starting (1.5 s late, behind a shell wrapper) is answered
// by the plugin, not sent to the agent as unknown text. An unknown /word
// with no plugin starting, and one while the only other instance is
// missing, go to the agent without waiting.
func TestCommandWaitsForAStartingCommandPlugin(t *testing.T) {
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow-ping")
	script := "#!/bin/sh\nsleep 1.5\nexec " + filepath.Join(filepath.Dir(loopbackBin), "clawhost-ping") + " \"$@\"\n"
	sdktest.WriteExecutable(t, slow, []byte(script), 0o700)
	e := newEnv(t, envOptions{
		extra: []pluginhost.Spec{
			{Instance: "ping", Source: "ping", Path: slow, DataDir: filepath.Join(dir, "ping"), Fingerprint: "ping"},
			{Instance: "gone", Source: "gone", Path: filepath.Join(dir, "clawhost-gone"), DataDir: filepath.Join(dir, "gone"), Fingerprint: "gone"},
		},
	})
	if st := e.host.Instance("ping").Status().State; st != pluginhost.StateStarting {
		t.Fatalf("ping is %s before the message, want starting (the test would prove nothing)", st)
	}
	e.post(dm("u1", "/ping early"))
	if got := e.text("chat-u1"); got != "pong early" {
		t.Errorf("/ping while the plugin starts: got %q, want the plugin's answer", got)
	}
	e.waitFor("gone missing", func() bool { return e.host.Instance("gone").Status().State == pluginhost.StateMissing })
	start := time.Now()
	e.post(dm("u1", "/nosuch thing"))
	contains(t, e.text("chat-u1"), "echo: ", "/nosuch thing")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("an unknown command took %s: nothing may wait for a missing or ready plugin", took)
	}
}

// TestOversizeMessageIsToldAndSkipped: a message over the plugin
// protocol's 8 MiB limit reaches the host as a stub through the loopback
// plugin process; the sender is told once, the agent never sees it, and
// the chat goes on.
func TestOversizeMessageIsToldAndSkipped(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.post(dm("u1", strings.Repeat("x", 9<<20)))
	got := e.text("chat-u1")
	contains(t, got, "too large to handle", "was skipped")
	if strings.Contains(got, "echo:") {
		t.Errorf("the agent answered the oversize message: %.80q", got)
	}
	e.post(dm("u1", "after the big one"))
	contains(t, e.text("chat-u1"), "echo:", "after the big one")
	e.quiet("chat-u1", 400*time.Millisecond)
	contains(t, e.logBuf.String(), "too large for the plugin protocol")
}

// In a group, a member listed nowhere cannot reset or stop the session
// (their /new and abort words are context); an owner can.
func TestGroupMemberCannotResetOrStop(t *testing.T) {
	// In a listed group without group_allow_from, a member listed nowhere
	// neither triggers the agent nor controls its session (before, any
	// member did both); u1 (allow_from) and the owner do.
	e := newLo(t, loOptions{})
	g := func(sender, text string) in {
		return in{"chat_id": "g1", "chat_type": "group", "sender_id": sender, "sender_name": sender, "text": text, "mentioned": true}
	}
	e.post(g("a", "hello from a"))
	e.post(g("a", "/new"))
	e.post(g("a", "stop"))
	e.post(g("u1", "hello")) // the first send to g1 (nothing before it: quiet)
	got := e.text("g1")
	contains(t, got, "echo: ", "hello", "hello from a", "System: This is your first turn in this group.")
	s1, _ := e.db.Session(context.Background(), "agent:main:lo:group:g1")
	e.post(g("a", "/new"))
	e.quiet("g1", g("u1", "after a's /new"))
	if s2, _ := e.db.Session(context.Background(), "agent:main:lo:group:g1"); s2.ClaudeSessionID != s1.ClaudeSessionID {
		t.Errorf("a member listed nowhere reset the group's session")
	}
	e.post(g("owner", "/new"))
	contains(t, e.text("g1"), "New session started")
}

// "/new sonnet text" starts a new session on sonnet and hands the agent
// the text without the model word (the seed's reset with a model hint).
func TestNewWithModelHint(t *testing.T) {
	e := newLo(t, loOptions{})
	e.post(dm("u1", "/new sonnet what is the weather"))
	got := e.text("chat-u1")
	contains(t, got, "echo: ", "User u1: what is the weather", "System: The model is now sonnet")
	if strings.Contains(got, "sonnet what") {
		t.Errorf("the model word reached the agent: %q", got)
	}
	s, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	if o := (*session.Cache)(nil).Of(s).Overrides(); o.Model != "sonnet" {
		t.Errorf("overrides %+v", o)
	}
	e.post(dm("u1", "/new opus"))
	contains(t, e.text("chat-u1"), "New session started with opus.")
}

// A scheduled run is a message of its chat: answered there (access does
// not apply: the configuration asked for it), once however often the same
// due time is fired; a heartbeat answered HEARTBEAT_OK shows nothing.
func TestScheduledRuns(t *testing.T) {
	e := newLo(t, loOptions{})
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	run := ScheduledRun{Job: "morning", At: at, Chat: "lo:chat-stranger", Prompt: "brief me"}
	if err := e.gw.Scheduled(ctx, run); err != nil {
		t.Fatal(err)
	}
	contains(t, e.text("chat-stranger"), "echo: ", "brief me")
	if err := e.gw.Scheduled(ctx, run); err != nil { // fired again (a retry)
		t.Fatal(err)
	}
	e.quiet("chat-stranger", in{"chat_id": "chat-stranger", "sender_id": "owner", "text": "after the retry"})
	if err := e.gw.Scheduled(ctx, ScheduledRun{Job: "heartbeat", At: at, Chat: "lo:chat-stranger", Prompt: "check #heartbeat-ok"}); err != nil {
		t.Fatal(err)
	}
	e.quiet("chat-stranger", in{"chat_id": "chat-stranger", "sender_id": "owner", "text": "after the heartbeat"})
	if err := e.gw.Scheduled(ctx, ScheduledRun{Job: "x", At: at, Chat: "nochat", Prompt: "p"}); err == nil {
		t.Error("a chat without an instance was accepted")
	}
}

// TestScheduledRunsInTheSendersSession: a run of a direct chat's entry
// (schedule_message, /schedule) is its person's turn, in the session their
// own messages run in, also where the direct chat's id is not the person's
// (Discord, Slack); without the sender the chat's id stands in.
func TestScheduledRunsInTheSendersSession(t *testing.T) {
	e := newLo(t, loOptions{})
	ctx := context.Background()
	e.post(dm("owner", "remind me at nine")) // chat-owner, sender owner
	contains(t, e.text("chat-owner"), "echo: ", "remind me at nine")
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	if err := e.gw.Scheduled(ctx, ScheduledRun{Job: "nine", At: at, Chat: "lo:chat-owner", Sender: "lo:owner", Prompt: "it is nine"}); err != nil {
		t.Fatal(err)
	}
	contains(t, e.text("chat-owner"), "echo: ", "it is nine")
	if err := e.gw.Scheduled(ctx, ScheduledRun{Job: "old", At: at, Chat: "lo:chat-owner", Prompt: "stored before the sender was kept"}); err != nil {
		t.Fatal(err)
	}
	contains(t, e.text("chat-owner"), "echo: ", "stored before")
	e.agent.mu.Lock()
	reqs := slices.Clone(e.agent.reqs)
	e.agent.mu.Unlock()
	if len(reqs) != 3 {
		t.Fatalf("%d turns, want 3", len(reqs))
	}
	if reqs[1].Key != reqs[0].Key {
		t.Errorf("the scheduled run's session %v, the person's %v", reqs[1].Key, reqs[0].Key)
	}
	if !strings.HasSuffix(reqs[2].Key, ":chat-owner") {
		t.Errorf("without a sender the run's session %v, want the chat's id as its peer", reqs[2].Key)
	}
}

// TestPairingTTL: an approval through pairing counts for pairing_ttl; after
// it the sender is asked to pair again.
func TestPairingTTL(t *testing.T) {
	var offset atomic.Int64
	e := newLo(t, loOptions{settings: func(s *Settings) { s.Access.PairingTTL = time.Hour },
		now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	e.post(dm("stranger", "let me in"))
	got := e.text("chat-stranger")
	code := got[strings.Index(got, "code is ")+8:]
	code = code[:strings.IndexByte(code, ' ')]
	mark := e.seen // the stranger may be told before the owner's answer is sent
	e.post(dm("owner", "/approve "+code))
	contains(t, e.text("chat-owner"), "Approved lo:stranger")
	e.seen = mark
	contains(t, e.text("chat-stranger"), "An owner approved you")
	contains(t, e.text("chat-stranger"), "echo: ", "let me in")
	e.post(dm("stranger", "within the hour"))
	contains(t, e.text("chat-stranger"), "echo: ", "within the hour")
	offset.Store(int64(time.Hour + time.Minute))
	e.post(dm("stranger", "a day later"))
	got = e.text("chat-stranger")
	contains(t, got, "pairing code")
	if strings.Contains(got, "echo") {
		t.Errorf("an expired approval still admits: %q", got)
	}
}
