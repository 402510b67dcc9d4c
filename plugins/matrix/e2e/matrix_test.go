package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/core/anthropictest"
	ce2e "github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/plugins/matrix/matrixtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// mxEnv is a Dendrite, a clawhost with the matrix plugin on it as @bot,
// Alice (an owner) with a DM with the bot, and Bob with Alice and the bot
// in #general.
type mxEnv struct {
	hs         *matrixtest.Server
	fake       *anthropictest.Server
	d          *ce2e.Daemon
	cfgPath    string
	bot        matrixtest.Account
	aliceAcct  matrixtest.Account
	alice, bob *mautrix.Client
	aw, bw     *watcher
	dm, room   id.RoomID
	ws         string
}

func claudeBin(t *testing.T) string {
	p := os.Getenv("CLAWHOST_CLAUDE_BIN")
	if p == "" {
		p, _ = filepath.Abs("../../../.cache/claude-cli/node_modules/.bin/claude")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
			t.Fatalf("claude CLI not found at %s", p)
		}
		t.Skip("claude CLI not installed (make claude-cli); set CLAWHOST_REQUIRE_CLAUDE=1 to fail instead")
	}
	return p
}

func startMatrix(t *testing.T, agentAttrs ...ce2e.Attrs) *mxEnv {
	t.Helper()
	bin := claudeBin(t)
	e := &mxEnv{hs: matrixtest.Start(t), fake: anthropictest.New()}
	t.Cleanup(e.fake.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	accts := map[string]matrixtest.Account{}
	for _, n := range []string{"bot", "alice", "bob"} {
		a, err := e.hs.Register(ctx, n, false)
		if err != nil {
			t.Fatal(err)
		}
		accts[n] = a
	}
	e.bot, e.aliceAcct = accts["bot"], accts["alice"]
	e.alice, e.bob = e.hs.Client(accts["alice"]), e.hs.Client(accts["bob"])
	dm, err := e.alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{e.bot.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	room, err := e.alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "public_chat", Name: "general", Invite: []id.UserID{e.bot.UserID, e.bob.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.bob.JoinRoomByID(ctx, room.RoomID); err != nil {
		t.Fatal(err)
	}
	e.dm, e.room = dm.RoomID, room.RoomID
	dir := t.TempDir()
	e.ws = filepath.Join(dir, "workspace")
	if err := os.MkdirAll(e.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "report.txt"), []byte("quarterly numbers"), 0o600); err != nil {
		t.Fatal(err)
	}
	attrs := ce2e.Attrs{"workspace": e.ws, "timeout": "60s"}
	for _, m := range agentAttrs {
		for k, v := range m {
			attrs[k] = v
		}
	}
	h := ce2e.Host{
		Dir:   t.TempDir(),
		Agent: ce2e.RealClaude(bin, filepath.Join(dir, "home"), e.fake.URL(), attrs),
		Access: ce2e.Attrs{"dm_policy": "allowlist", "allow_from": []string{"mx:" + accts["alice"].UserID.String()},
			"owners": []string{"mx:" + accts["alice"].UserID.String()},
			"groups": []string{"mx:" + e.room.String()}, "group_allow_from": []string{"mx:*"}, "require_mention": true},
		Admin:    ce2e.Attrs{"listen": ""},
		Messages: ce2e.Attrs{"streaming": "off"},
		Plugins: []ce2e.Plugin{{Name: "mx", Source: "matrix", Config: ce2e.Attrs{
			"homeserver": e.hs.URL, "user_id": e.bot.UserID.String(), "password": e.bot.Password,
			"invites_from": []string{accts["alice"].UserID.String()}}}},
	}
	e.cfgPath = h.Write(t)
	e.aw, e.bw = watch(t, e.alice), watch(t, e.bob)
	t.Cleanup(func() {
		if t.Failed() {
			for _, w := range []*watcher{e.aw, e.bw} {
				w.mu.Lock()
				for _, ev := range w.events {
					if c := ev.Content.AsMessage(); c != nil {
						t.Logf("%s saw in %s from %s: %q", w.cli.UserID, ev.RoomID, ev.Sender, c.Body)
					}
				}
				w.mu.Unlock()
			}
		}
	})
	e.d = ce2e.Launch(t, e.cfgPath)
	// The bot joins both rooms on Alice's invites.
	sdktest.WaitFor(t, "the bot to join the DM and #general", func() bool {
		return e.joined(e.dm) && e.joined(e.room)
	})
	return e
}

func (e *mxEnv) joined(room id.RoomID) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := e.alice.JoinedMembers(ctx, room)
	if err != nil {
		return false
	}
	_, ok := m.Joined[e.bot.UserID]
	return ok
}

// send posts c into room as cli and returns its event id.
func send(t *testing.T, cli *mautrix.Client, room id.RoomID, c *event.MessageEventContent) id.EventID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cli.SendMessageEvent(ctx, room, event.EventMessage, c)
	if err != nil {
		t.Fatal(err)
	}
	return r.EventID
}

func text(s string) *event.MessageEventContent {
	return &event.MessageEventContent{MsgType: event.MsgText, Body: s}
}

// waitBot waits until one of the bot's messages in room that w sees
// matches, and returns it.
func (e *mxEnv) waitBot(t *testing.T, w *watcher, room id.RoomID, what string, match func(*event.MessageEventContent) bool) *event.Event {
	t.Helper()
	var found *event.Event
	sdktest.WaitFor(t, what, func() bool {
		for _, ev := range w.from(room, e.bot.UserID) {
			if c := ev.Content.AsMessage(); c != nil && match(c) {
				found = ev
				return true
			}
		}
		return false
	})
	return found
}

func contains(s string) func(*event.MessageEventContent) bool {
	return func(c *event.MessageEventContent) bool { return strings.Contains(c.Body, s) }
}

// count is how many of the bot's messages in room show s.
func (e *mxEnv) count(w *watcher, room id.RoomID, s string) int {
	n := 0
	for _, ev := range w.from(room, e.bot.UserID) {
		if c := ev.Content.AsMessage(); c != nil && strings.Contains(c.Body, s) {
			n++
		}
	}
	return n
}

// TestMatrixChannel: through the real binary, the real plugin, a real
// homeserver and the real claude CLI: a DM answered once, in HTML; in a
// group, chatter not answered, a mention (m.mentions) answered, a reply in
// its thread answered in the thread; a long answer in several events
// whose code blocks are each whole.
func TestMatrixChannel(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)

	e.fake.Enqueue(anthropictest.Reply{Text: "Hello **Alice**."})
	send(t, e.alice, e.dm, text("hi there"))
	m := e.waitBot(t, e.aw, e.dm, "the DM's answer", contains("Hello Alice."))
	if c := m.Content.AsMessage(); c.Format != event.FormatHTML || !strings.Contains(c.FormattedBody, "<strong>Alice</strong>") {
		t.Errorf("the answer is not HTML: %q %q", c.Format, c.FormattedBody)
	}
	if got := e.fake.Requests()[0].LastUserText(); !strings.Contains(got, "hi there") {
		t.Errorf("claude did not get the DM: %q", got)
	}

	// #general: chatter is not answered; a mention is; a reply in the
	// mention's thread is answered in the thread.
	send(t, e.bob, e.room, text("just chatting"))
	e.fake.Enqueue(anthropictest.Reply{Text: "Channel answer."})
	mention := text("bot: what did I say?")
	mention.Mentions = &event.Mentions{UserIDs: []id.UserID{e.bot.UserID}}
	root := send(t, e.bob, e.room, mention)
	m = e.waitBot(t, e.bw, e.room, "the mention's answer", contains("Channel answer."))
	if rel := m.Content.AsMessage().RelatesTo; rel.GetThreadParent() != "" {
		t.Errorf("the channel answer went into a thread: %+v", rel)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Thread answer."})
	inThread := text("and in a thread?")
	inThread.RelatesTo = (&event.RelatesTo{}).SetThread(root, root)
	inThread.Mentions = &event.Mentions{UserIDs: []id.UserID{e.bot.UserID}}
	send(t, e.bob, e.room, inThread)
	m = e.waitBot(t, e.bw, e.room, "the thread's answer", contains("Thread answer."))
	if got := m.Content.AsMessage().RelatesTo.GetThreadParent(); got != root {
		t.Errorf("the thread answer is in thread %q, want %q", got, root)
	}
	if n := len(e.bw.from(e.room, e.bot.UserID)); n != 2 {
		t.Errorf("%d bot messages in #general, want 2 (the chatter is not answered)", n)
	}

	// A long answer: several events, each code block opened and closed in
	// the same event.
	var code strings.Builder
	for i := range 700 {
		fmt.Fprintf(&code, "line %03d: some code that fills the block with text\n", i)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Here is the listing:\n\n```go\n" + code.String() + "```\n\nThat is all."})
	send(t, e.alice, e.dm, text("show me the listing"))
	e.waitBot(t, e.aw, e.dm, "the listing's end", contains("That is all."))
	var parts []*event.MessageEventContent
	for _, ev := range e.aw.from(e.dm, e.bot.UserID) {
		if c := ev.Content.AsMessage(); strings.Contains(c.Body, "line ") {
			parts = append(parts, c)
		}
	}
	if len(parts) < 2 {
		t.Fatalf("the long answer came in %d events", len(parts))
	}
	for i, p := range parts {
		if o, c := strings.Count(p.FormattedBody, "<pre"), strings.Count(p.FormattedBody, "</pre>"); o != 1 || c != 1 {
			t.Errorf("part %d has %d <pre> and %d </pre>", i, o, c)
		}
		if !strings.HasPrefix(p.FormattedBody, `<pre><code class="language-go">`) && !strings.Contains(p.FormattedBody, `<p>Here is the listing:</p><pre><code class="language-go">`) {
			t.Errorf("part %d does not open its go block: %.80q", i, p.FormattedBody)
		}
		b, _ := json.Marshal(p)
		if len(b) > 60000 {
			t.Errorf("part %d is %d bytes of JSON, over the event's limit", i, len(b))
		}
		t.Logf("part %d: %d bytes of body, %d of formatted_body, %d of JSON", i, len(p.Body), len(p.FormattedBody), len(b))
	}
	if !strings.Contains(parts[len(parts)-1].Body, "line 699") {
		t.Error("the end of the listing is missing")
	}
	if e.count(e.aw, e.dm, "Hello Alice.") != 1 {
		t.Error("the DM was answered more than once")
	}
}
