package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/mcpchannel/mcpchanneltest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// mcAlice and mcBob are the test channel server's people; in a direct
// chat the chat id is the sender's id, as on Telegram.
const (
	mcAlice = "1001"
	mcBob   = "2002"
)

// startMCPHost is the real binary and the real claude CLI against the fake
// Anthropic API behind the mcp-channel bridge (instance "mc") running the
// test binary as its channel server; Alice and Bob may talk to it.
func startMCPHost(t *testing.T, messages Attrs) (*Daemon, *anthropictest.Server, *mcpchanneltest.Platform, string) {
	t.Helper()
	bin := clClaudeBin(t)
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	p, block := newMCPPlatform(t)
	ws := filepath.Join(dir, "workspace")
	d := Start(t, Host{
		Dir:      dir,
		Agent:    RealClaude(bin, filepath.Join(dir, "home"), fake.URL(), Attrs{"workspace": ws, "timeout": "90s"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"mc:" + mcAlice, "mc:" + mcBob}},
		Admin:    Attrs{"listen": ""},
		Messages: messages,
		Plugins:  []Plugin{{Name: "mc", Source: "mcp-channel", Config: Attrs(block)}},
	})
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range []string{mcAlice, mcBob} {
				t.Logf("chat %s: %+v", c, p.Messages(c))
			}
		}
	})
	mcWait(t, p, "the channel server's start", func() bool { return p.Starts() >= 1 })
	return d, fake, p, ws
}

// newMCPPlatform starts the test channel server's platform (closed when the
// test ends) and returns it with the bridge's config block that runs this
// test binary as its channel server.
func newMCPPlatform(t *testing.T) (*mcpchanneltest.Platform, map[string]any) {
	t.Helper()
	p, err := mcpchanneltest.NewPlatform(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	block, err := p.Block()
	if err != nil {
		t.Fatal(err)
	}
	return p, block
}

// mcWait waits for cond after each change of the platform, bounded as
// sdktest.WaitFor is.
func mcWait(t *testing.T, p *mcpchanneltest.Platform, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), sdktest.WaitDeadline(t))
	defer cancel()
	if err := p.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// mcBot returns the bot's messages in chat whose text contains s.
func mcBot(p *mcpchanneltest.Platform, chat, s string) []mcpchanneltest.Message {
	var out []mcpchanneltest.Message
	for _, m := range p.Messages(chat) {
		if m.FromBot && strings.Contains(m.Text, s) {
			out = append(out, m)
		}
	}
	return out
}

// mcSettle waits d for the platform to show nothing more (bounded: the
// check after it is that a message did not come twice).
func mcSettle(p *mcpchanneltest.Platform, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = p.WaitFor(ctx, func() bool { return false })
}

// TestMCPChannelClaude: through the real binary, the bridge and the real
// claude CLI — an attachment the server names in meta is copied into the
// chat's media store; each chat of the channel server is a session of its
// own (Bob's prompt carries nothing of Alice's); send_file goes out as the
// reply tool's files; a slow turn shows the turn card, edited through
// edit_message into the answer.
func TestMCPChannelClaude(t *testing.T) {
	t.Parallel()
	_, fake, p, ws := startMCPHost(t, nil)

	fake.Enqueue(anthropictest.Reply{Text: "Hello Alice."})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "the secret word is plum", mcpchanneltest.File{Name: "note.txt", Data: []byte("attached body")}); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "Alice's answer", func() bool { return len(mcBot(p, mcAlice, "Hello Alice.")) == 1 })
	// The attachment the server named in meta is in the chat's own media
	// directory, and the prompt names it there.
	first := fake.Requests()[0].LastUserText()
	stored := regexp.MustCompile(`/\S+/media/mc_direct_1001/[^\s)\]]+`).FindString(first)
	if stored == "" {
		t.Fatalf("the prompt names no stored attachment: %q", first)
	}
	if b, err := os.ReadFile(stored); err != nil || string(b) != "attached body" {
		t.Fatalf("the stored attachment %s: %q, %v", stored, b, err)
	}
	fake.Enqueue(anthropictest.Reply{Text: "Hello Bob."})
	if _, err := p.Push(mcBob, mcBob, "bob", "what is the secret word?"); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "Bob's answer", func() bool { return len(mcBot(p, mcBob, "Hello Bob.")) == 1 })
	reqs := fake.Requests()
	bob := reqs[len(reqs)-1]
	for _, u := range bob.UserTexts() {
		if strings.Contains(u, "plum") {
			t.Fatalf("Bob's turn sees Alice's chat: %q", u)
		}
	}
	if !strings.Contains(bob.LastUserText(), "what is the secret word?") {
		t.Fatalf("Bob's prompt: %q", bob.LastUserText())
	}

	// A file.
	if err := os.WriteFile(filepath.Join(ws, "report.txt"), []byte("quarterly numbers"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(sendFile("report.txt", "Q3 report"), anthropictest.Reply{Text: "Here it is."})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "send me the report"); err != nil {
		t.Fatal(err)
	}
	var doc mcpchanneltest.Message
	mcWait(t, p, "the report", func() bool {
		for _, m := range p.Messages(mcAlice) {
			if m.FromBot && len(m.Files) > 0 {
				doc = m
				return true
			}
		}
		return false
	})
	if doc.Files[0].Name != "report.txt" || string(doc.Files[0].Data) != "quarterly numbers" {
		t.Errorf("the file %q %q", doc.Files[0].Name, doc.Files[0].Data)
	}
	mcWait(t, p, "the answer with the file", func() bool { return len(mcBot(p, mcAlice, "Here it is.")) == 1 })

	// The turn card: a slow answer replaces the card by edits.
	fake.Enqueue(anthropictest.Reply{Text: "The slow answer.", HeaderDelay: 7 * time.Second})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "think hard"); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "the slow answer", func() bool { return len(mcBot(p, mcAlice, "The slow answer.")) == 1 })
	answer := mcBot(p, mcAlice, "The slow answer.")[0]
	carded := false
	for _, e := range answer.Edits {
		carded = carded || strings.Contains(e, "Working")
	}
	if !carded {
		t.Errorf("the slow answer %q was not the edited card (earlier texts %q)", answer.Text, answer.Edits)
	}

	// A slow answer with a file (issue 56): the card shows, the answer
	// streams into it, and the reply carries send_file's caption and file.
	// The card becomes the answer and the file goes below it with its
	// caption: the answer shows once (it showed in the card and again as
	// the file's text before).
	fake.Enqueue(sendFile("report.txt", "Q3 again"),
		anthropictest.Reply{Text: "Here it is again, slowly.", HeaderDelay: 4 * time.Second, Chunks: 4, ChunkDelay: 700 * time.Millisecond})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "send it again, slowly"); err != nil {
		t.Fatal(err)
	}
	files := func() (out []mcpchanneltest.Message) {
		for _, m := range p.Messages(mcAlice) {
			if m.FromBot && len(m.Files) > 0 {
				out = append(out, m)
			}
		}
		return out
	}
	// The file is sent after the card's last edit (the reply's parts go
	// in order): once it is there, the chat shows its end state.
	mcWait(t, p, "the second report", func() bool { return len(files()) == 2 })
	if doc := files()[1]; strings.TrimSpace(doc.Text) != "Q3 again" {
		t.Errorf("the file's message says %q; want only its caption", doc.Text)
	}
	if again := mcBot(p, mcAlice, "Here it is again"); len(again) != 1 || again[0].Text != "Here it is again, slowly." || !slices.ContainsFunc(again[0].Edits, func(e string) bool { return strings.Contains(e, "Working") }) {
		t.Errorf("the answer shows in %+v; want once, in the card", again)
	}
}

// TestMCPChannelFaults: through the real binary and claude — a channel
// server SIGKILLed after the platform took a reply and before it answered
// the call: the reply is in the chat once, the chat is told a part may be
// missing (by the restarted server), nothing is sent twice; a server that
// crashes is restarted and answers; clawhost SIGKILLed mid-turn (taking the
// bridge and the server with it) answers the message once after its
// restart.
func TestMCPChannelFaults(t *testing.T) {
	t.Parallel()
	// The answer goes through the outbox, whose guarantee this is (a live
	// draft is sent outside it).
	d, fake, p, _ := startMCPHost(t, Attrs{"turn_card": "off", "streaming": "off"})

	p.CrashOnReply()
	fake.Enqueue(anthropictest.Reply{Text: "Answer one."})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "first"); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "the uncertain notice", func() bool { return len(mcBot(p, mcAlice, "may be missing")) == 1 })
	if p.Starts() < 2 {
		t.Errorf("the notice came before the server's restart (%d starts)", p.Starts())
	}
	mcSettle(p, 2*time.Second)
	if n := len(mcBot(p, mcAlice, "Answer one.")); n != 1 {
		t.Fatalf("the answer is in the chat %d times", n)
	}

	// A crash between messages.
	starts := p.Starts()
	p.CrashServer()
	mcWait(t, p, "the restart", func() bool { return p.Starts() > starts })
	fake.Enqueue(anthropictest.Reply{Text: "Back again."})
	if _, err := p.Push(mcBob, mcBob, "bob", "are you there?"); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "the answer after the crash", func() bool { return len(mcBot(p, mcBob, "Back again.")) == 1 })

	// clawhost SIGKILLed while claude works.
	n := fake.Count()
	fake.Enqueue(anthropictest.Reply{Text: "never shown", HeaderDelay: time.Minute}, anthropictest.Reply{Text: "After the restart."})
	starts = p.Starts()
	if _, err := p.Push(mcAlice, mcAlice, "alice", "survive this"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := fake.WaitRequest(ctx, n+1); err != nil {
		t.Fatalf("the turn's request: %v", err)
	}
	_ = d.Process().Kill()
	_ = d.cmd.Wait()
	d.spawn()
	mcWait(t, p, "the answer after clawhost's restart", func() bool { return len(mcBot(p, mcAlice, "After the restart.")) == 1 })
	if p.Starts() <= starts {
		t.Errorf("no new channel server after the restart")
	}
	mcSettle(p, 2*time.Second)
	if n := len(mcBot(p, mcAlice, "After the restart.")); n != 1 {
		t.Errorf("the answer after the restart is in the chat %d times", n)
	}
	if n := len(mcBot(p, mcAlice, "never shown")); n != 0 {
		t.Errorf("the killed turn's answer was shown")
	}
}

// TestMCPChannelPluginTest: `clawhost plugin test` passes the bridge with
// the test channel server, its inbound checks included (the inject
// command pushes to the platform).
func TestMCPChannelPluginTest(t *testing.T) {
	t.Parallel()
	p, block := newMCPPlatform(t)
	cfg, err := json.Marshal(block)
	if err != nil {
		t.Fatal(err)
	}
	inject := `curl -sf -d "{\"chat_id\":\"c1\",\"user_id\":\"u1\",\"user\":\"u\",\"text\":$CLAWHOST_TEST_TEXT_JSON}" ` + p.URL() + `/push`
	code, out, errs := runPluginTest(t, "-config-json", string(cfg), "-inject", inject, filepath.Join(binDir(t), "clawhost-mcp-channel"))
	if code != 0 || strings.Contains(out, "FAIL") || !strings.Contains(out, "PASS  receive_ack_redeliver") || !strings.Contains(out, "PASS  unknown_chat") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestMCPChannelFakechat: Anthropic's own fakechat server, under Bun,
// through the real binary, the bridge and the real claude CLI: a message
// typed in its web UI (its WebSocket) is answered there. Skipped unless
// CLAWHOST_FAKECHAT_DIR names the plugin's directory (claude-plugins-
// official's external_plugins/fakechat, `bun install` run in it) and bun
// is on PATH.
func TestMCPChannelFakechat(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CLAWHOST_FAKECHAT_DIR")
	if dir == "" {
		t.Skip("CLAWHOST_FAKECHAT_DIR is not set (the official fakechat plugin's directory)")
	}
	if _, err := exec.LookPath("bun"); err != nil {
		t.Skip("bun is not on PATH (npm install bun)")
	}
	bin := clClaudeBin(t)
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	hdir := t.TempDir()
	Start(t, Host{
		Dir:      hdir,
		Agent:    RealClaude(bin, filepath.Join(hdir, "home"), fake.URL(), Attrs{"workspace": filepath.Join(hdir, "workspace"), "timeout": "90s"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"fc:web"}},
		Admin:    Attrs{"listen": ""},
		Messages: Attrs{"turn_card": "off", "streaming": "off"},
		Plugins: []Plugin{{Name: "fc", Source: "mcp-channel", Config: Attrs{"plugin_path": dir,
			"env": map[string]string{"FAKECHAT_PORT": port, "HOME": filepath.Join(hdir, "fchome")}}}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var conn *websocket.Conn
	for conn == nil {
		// fakechat serves its page once the bridge connected to it.
		c, _, err := websocket.Dial(ctx, "ws://127.0.0.1:"+port+"/ws", nil)
		if err == nil {
			conn = c
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("fakechat's web UI: %v", err)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	defer conn.CloseNow()
	fake.Enqueue(anthropictest.Reply{Text: "Hello from clawhost."})
	if err := wsjson.Write(ctx, conn, map[string]string{"id": "u1", "text": "hello fakechat"}); err != nil {
		t.Fatal(err)
	}
	for {
		var m struct{ Type, From, Text string }
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("waiting for the answer in fakechat: %v", err)
		}
		if m.Type == "msg" && m.From == "assistant" && strings.Contains(m.Text, "Hello from clawhost.") {
			break
		}
	}
	if got := fake.Requests()[0].LastUserText(); !strings.Contains(got, "hello fakechat") {
		t.Errorf("claude's prompt: %q", got)
	}
}

// TestMCPChannelPermissionRelay: through the real binary and claude, with
// tool approvals in the chat and permission_relay_from naming Alice (an
// owner): claude's Bash question is posted in her chat and put to the
// channel server as a permission prompt; the server's "allow" runs the
// command, its "deny" keeps the next one from running (no answer would
// deny only after approval_timeout, and the file check tells them apart).
func TestMCPChannelPermissionRelay(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	dir, outside := t.TempDir(), t.TempDir()
	p, block := newMCPPlatform(t)
	block["permission_relay_from"] = mcAlice
	Start(t, Host{
		Dir: dir,
		Agent: RealClaude(bin, filepath.Join(dir, "home"), fake.URL(), Attrs{"workspace": filepath.Join(dir, "workspace"), "timeout": "90s",
			"approvals": "chat", "approval_timeout": "60s", "sandbox": "off"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"mc:" + mcAlice}, "owners": []string{"mc:" + mcAlice}},
		Admin:    Attrs{"listen": ""},
		Messages: Attrs{"turn_card": "off", "streaming": "off"},
		Plugins:  []Plugin{{Name: "mc", Source: "mcp-channel", Config: Attrs(block)}},
	})
	mcWait(t, p, "the channel server's start", func() bool { return p.Starts() >= 1 })
	touch := func(name string) anthropictest.Reply {
		return anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch " + filepath.Join(outside, name), "description": "create " + name}}}
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(outside, name)); return err == nil }

	fake.Enqueue(touch("allowed"), anthropictest.Reply{Text: "Created it."})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "create allowed"); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "the first prompt", func() bool { return len(p.Permissions()) == 1 })
	pr := p.Permissions()[0]
	if !strings.Contains(pr.Description, "touch "+filepath.Join(outside, "allowed")) {
		t.Errorf("the prompt shows %q", pr.Description)
	}
	if len(mcBot(p, mcAlice, "[Allow] [Deny]")) != 1 {
		t.Errorf("the question in the chat lacks its choices: %+v", p.Messages(mcAlice))
	}
	p.Answer(pr.RequestID, "allow")
	mcWait(t, p, "the answer after allow", func() bool { return len(mcBot(p, mcAlice, "Created it.")) == 1 })
	if !exists("allowed") {
		t.Error("allowed through the relay, the command did not run")
	}

	fake.Enqueue(touch("denied"), anthropictest.Reply{Text: "It was denied."})
	if _, err := p.Push(mcAlice, mcAlice, "alice", "create denied"); err != nil {
		t.Fatal(err)
	}
	mcWait(t, p, "the second prompt", func() bool { return len(p.Permissions()) == 2 })
	p.Answer(p.Permissions()[1].RequestID, "deny")
	mcWait(t, p, "the answer after deny", func() bool { return len(mcBot(p, mcAlice, "It was denied.")) == 1 })
	if exists("denied") {
		t.Error("denied through the relay, the command ran")
	}
}
