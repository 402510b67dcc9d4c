package mcpchannel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawhost/clawhost/plugins/mcpchannel/mcpchanneltest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestMain lets the test binary double as the channel server.
func TestMain(m *testing.M) {
	mcpchanneltest.Main(os.Exit)
	os.Exit(m.Run())
}

// inbox records what Run delivers.
type inbox struct {
	mu   sync.Mutex
	msgs []channel.InboundMessage
	got  chan struct{}
}

func newInbox() *inbox { return &inbox{got: make(chan struct{}, 100)} }

// runInBackground runs a configured adapter with a new inbox until the
// test ends; the cleanup cancels Run and waits for it to return.
func runInBackground(t *testing.T, a *Adapter) *inbox {
	t.Helper()
	box := newInbox()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, box) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return box
}

func (b *inbox) Deliver(_ context.Context, msgs ...channel.InboundMessage) error {
	b.mu.Lock()
	b.msgs = append(b.msgs, msgs...)
	b.mu.Unlock()
	b.got <- struct{}{}
	return nil
}

// next waits for the next delivered message.
func (b *inbox) next(t *testing.T) channel.InboundMessage {
	t.Helper()
	select {
	case <-b.got:
	case <-time.After(20 * time.Second):
		t.Fatal("no message delivered")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.msgs[len(b.msgs)-1]
}

// newPlatform is a new test platform in dir, closed when the test ends.
func newPlatform(t *testing.T, dir string) *mcpchanneltest.Platform {
	t.Helper()
	p, err := mcpchanneltest.NewPlatform(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// blockJSON is p's config block (Platform.Block) with more's attribute,
// value pairs set on it, as JSON.
func blockJSON(t *testing.T, p *mcpchanneltest.Platform, more ...any) []byte {
	t.Helper()
	block, err := p.Block()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(more); i += 2 {
		block[more[i].(string)] = more[i+1]
	}
	cfg, err := json.Marshal(block)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startBridge runs an adapter on a test server of a new platform, with
// more of the config block.
func startBridge(t *testing.T, more ...any) (*Adapter, *mcpchanneltest.Platform, *inbox) {
	t.Helper()
	dir := t.TempDir()
	p := newPlatform(t, dir)
	cfg := blockJSON(t, p, more...)
	a := New()
	a.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Configure(ctx, schema.Config{Instance: "chat", DataDir: dir, JSON: cfg}); err != nil {
		t.Fatal(err)
	}
	box := runInBackground(t, a)
	return a, p, box
}

// waitFor waits for cond after each change of the platform, bounded as
// sdktest.WaitFor is.
func waitFor(t *testing.T, p *mcpchanneltest.Platform, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), sdktest.WaitDeadline(t))
	defer cancel()
	if err := p.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestRoundTrip: a message becomes an inbound message with the ids of its
// meta and its file; a reply, with a file, reaches the chat and names its
// id; an edit and a reaction reach the message.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	a, p, box := startBridge(t)
	caps := a.Capabilities()
	if caps.DisplayName != "Test chat" || len(caps.MediaOut) == 0 || caps.MaxTextLength != DefaultTextLimit {
		t.Errorf("capabilities %+v", caps)
	}
	id, err := p.Push("42", "42", "alice", "hello", mcpchanneltest.File{Name: "note.txt", Data: []byte("file body")})
	if err != nil {
		t.Fatal(err)
	}
	m := box.next(t)
	if m.ChatID != "42" || m.Sender.ID != "42" || m.Sender.Username != "alice" || m.MessageID != id || m.Text != "hello" || m.ChatType != channel.ChatDirect || !m.WasMentioned {
		t.Fatalf("inbound %+v", m)
	}
	if len(m.Media) != 1 || m.Media[0].Filename != filepath.Base(strings.TrimPrefix(m.Media[0].Ref, refPath)) {
		t.Fatalf("media %+v", m.Media)
	}
	rc, _, err := a.DownloadMedia(context.Background(), channel.DownloadRequest{Ref: m.Media[0].Ref})
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if _, _, err := a.DownloadMedia(context.Background(), channel.DownloadRequest{Ref: "path:relative"}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("a relative path: %v", err)
	}

	out := filepath.Join(t.TempDir(), "report.txt")
	if err := os.WriteFile(out, []byte("the report"), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err := a.Send(context.Background(), channel.SendRequest{ChatID: "42", Text: "here it is", ReplyToMessageID: id,
		Media: []channel.OutboundMedia{{Path: out, Kind: channel.MediaDocument}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := p.Messages("42")
	bot := msgs[len(msgs)-1]
	if len(resp.MessageIDs) != 1 || resp.MessageIDs[0] != bot.ID || bot.Text != "here it is" || bot.ReplyTo != id || len(bot.Files) != 1 || string(bot.Files[0].Data) != "the report" {
		t.Fatalf("sent %+v as %+v", resp, bot)
	}
	if err := a.Edit(context.Background(), channel.EditRequest{ChatID: "42", MessageID: bot.ID, Text: "edited"}); err != nil {
		t.Fatal(err)
	}
	if err := a.React(context.Background(), channel.ReactRequest{ChatID: "42", MessageID: id, Emoji: "👍"}); err != nil {
		t.Fatal(err)
	}
	msgs = p.Messages("42")
	if msgs[1].Text != "edited" || len(msgs[1].Edits) != 1 || len(msgs[0].Reactions) != 1 {
		t.Fatalf("after edit and react: %+v", msgs)
	}
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: "nobody", Text: "nowhere"}); channel.CodeOf(err) != channel.CodeChatNotFound {
		t.Errorf("a send to no chat: %v", err)
	}
}

// TestKilledMidReply: a server killed after the platform took the reply
// and before it answered makes Send fail as uncertain (the host does not
// repeat it), the message is in the chat once, and the next send, made at
// once, waits for the next server.
func TestKilledMidReply(t *testing.T) {
	t.Parallel()
	a, p, box := startBridge(t)
	if _, err := p.Push("7", "7", "bob", "hi"); err != nil {
		t.Fatal(err)
	}
	box.next(t)
	p.CrashOnReply()
	_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "7", Text: "lost answer"})
	if channel.CodeOf(err) != channel.CodeUncertain {
		t.Fatalf("Send after the server died mid-reply: %v, want %s", err, channel.CodeUncertain)
	}
	if n := len(p.Messages("7")); n != 2 {
		t.Fatalf("%d messages in the chat, want the question and the lost answer", n)
	}
	// At once, before the restart: the send waits for the next server
	// (a call to the dead one would be uncertain too).
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: "7", Text: "next"}); err != nil {
		t.Fatalf("Send right after the death: %v", err)
	}
	if p.Starts() != 2 {
		t.Errorf("%d server starts", p.Starts())
	}
	if _, err := p.Push("7", "7", "bob", "still there?"); err != nil {
		t.Fatal(err)
	}
	if m := box.next(t); m.Text != "still there?" {
		t.Fatalf("inbound %+v", m)
	}
}

// TestCrashRestarts: a server that exits is started again and its
// messages flow.
func TestCrashRestarts(t *testing.T) {
	t.Parallel()
	_, p, box := startBridge(t)
	p.CrashServer()
	waitFor(t, p, "the restarted server", func() bool { return p.Starts() == 2 })
	if _, err := p.Push("9", "9", "carol", "after the crash"); err != nil {
		t.Fatal(err)
	}
	if m := box.next(t); m.Text != "after the crash" || m.ChatID != "9" {
		t.Fatalf("inbound %+v", m)
	}
}

// TestNotSentWhileDown: with no server running a send fails as
// unavailable (never written: the host retries it).
func TestNotSentWhileDown(t *testing.T) {
	t.Parallel()
	if err := sendError(errNotSent); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Fatalf("%v", err)
	}
}

// TestProbe: the test server passes (its name, its tools); a program that
// is no channel server fails with what to do.
func TestProbe(t *testing.T) {
	t.Parallel()
	cfg := blockJSON(t, newPlatform(t, t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := Probe(ctx, schema.Config{Instance: "chat", DataDir: t.TempDir(), JSON: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Worst() != "ok" || rep.Identity.Name != "Test chat" || len(rep.Checks) != 2 || !strings.Contains(rep.Checks[1].Found, "edit_message, react, reply") {
		t.Fatalf("report %+v", rep)
	}
	cfg, _ = json.Marshal(map[string]any{"command": []string{"/bin/cat"}, "start_timeout": 2})
	rep, err = Probe(ctx, schema.Config{Instance: "chat", DataDir: t.TempDir(), JSON: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Worst() != "fail" || rep.Checks[0].Do == "" {
		t.Fatalf("report for cat %+v", rep)
	}
}

// TestConfig: the block's mistakes are reported together; a Claude Code
// plugin's .mcp.json gives the command with ${CLAUDE_PLUGIN_ROOT}
// expanded.
func TestConfig(t *testing.T) {
	t.Parallel()
	cfg, _ := json.Marshal(map[string]any{"markup": "html", "chat_type": "dm", "text_limit": 0.5})
	err := Validate(context.Background(), schema.Config{JSON: cfg})
	var d schema.Diagnostics
	if !errors.As(err, &d) || len(d) != 4 {
		t.Fatalf("diagnostics %v", err)
	}
	dir := t.TempDir()
	mcp := `{"mcpServers": {"fakechat": {"command": "bun", "args": ["run", "--cwd", "${CLAUDE_PLUGIN_ROOT}", "start"]}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(mcp), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ = json.Marshal(map[string]any{"plugin_path": dir, "env": map[string]string{"FAKECHAT_PORT": "8788"}})
	_, l, err := decodeConfig(schema.Config{JSON: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(l.argv, " ") != "bun run --cwd "+dir+" start" || l.dir != dir || l.env["FAKECHAT_PORT"] != "8788" || l.env["CLAUDE_PLUGIN_ROOT"] != dir {
		t.Fatalf("launch %+v", l)
	}
}

// TestOffered: edits and reactions are offered as the server's tools
// allow.
func TestOffered(t *testing.T) {
	t.Parallel()
	a := New()
	if o := a.Offered(); o.Edit || o.Reactions {
		t.Errorf("unconfigured: %+v", o)
	}
	a.first = &server{tools: map[string]*mcp.Tool{toolReply: {Name: toolReply}, toolReact: {Name: toolReact}}}
	if o := a.Offered(); o.Edit || !o.Reactions {
		t.Errorf("a server with reply and react: %+v", o)
	}
}

// TestRefusal: the official servers' and their libraries' refusals get
// their codes; anything else is not a refusal (a reply may have been
// posted).
func TestRefusal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		code channel.Code
	}{
		{"reply failed: chat 42 is not allowlisted — add via /telegram:access", channel.CodeForbidden},
		{"reply failed: Call to 'sendMessage' failed! (400: Bad Request: chat not found)", channel.CodeChatNotFound},
		{"reply failed: Call to 'sendMessage' failed! (403: Forbidden: bot was blocked by the user)", channel.CodeForbidden},
		{"reply failed: Call to 'getMe' failed! (401: Unauthorized)", channel.CodeUnauthorized},
		{"unknown tool: reply", channel.CodeUnsupported},
		{"reply failed: message 14030 could not be quoted", ""},
		{"reply failed: socket hang up", ""},
	} {
		code, ok := refusal(tc.text)
		if code != tc.code || ok != (tc.code != "") {
			t.Errorf("refusal(%q) = %q, %v; want %q", tc.text, code, ok, tc.code)
		}
	}
}

// TestPermissionRelay: with permission_relay_from, a question with allow
// and deny buttons is posted with its labels and put to the server as a
// permission prompt; the server's answer comes back as a press of the
// matching button by that person; an answer to no open prompt is dropped.
// Without it there are no buttons and no prompt.
func TestPermissionRelay(t *testing.T) {
	t.Parallel()
	a, p, box := startBridge(t, "permission_relay_from", "42")
	if c := a.Capabilities(); !c.Buttons || c.MaxTextLength != DefaultTextLimit-labelRoom {
		t.Fatalf("with the relay: %+v, want buttons and room for their labels", c)
	}
	if _, err := p.Push("42", "42", "alice", "do it"); err != nil {
		t.Fatal(err)
	}
	box.next(t)
	q := channel.SendRequest{ChatID: "42", Text: "claude wants to use Bash:\ntouch x",
		Buttons: [][]channel.Button{{{ID: "q1:y", Label: "Allow"}, {ID: "q1:n", Label: "Deny"}}, {{ID: "q1:a", Label: "Always allow touch"}}}}
	sent, err := a.Send(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	msgs := p.Messages("42")
	if last := msgs[len(msgs)-1]; !strings.HasSuffix(last.Text, "[Allow] [Deny] [Always allow touch]") {
		t.Errorf("the question as posted: %q", last.Text)
	}
	waitFor(t, p, "the permission prompt", func() bool { return len(p.Permissions()) == 1 })
	pr := p.Permissions()[0]
	if len(pr.RequestID) != 5 || pr.ToolName != "claude wants to use Bash:" || pr.Description != q.Text {
		t.Fatalf("prompt %+v", pr)
	}
	p.Answer("zzzzz", "allow")
	p.Answer(pr.RequestID, "deny")
	m := box.next(t)
	if m.Action == nil || m.Action.ButtonID != "q1:n" || m.Action.MessageID != sent.MessageIDs[0] || m.Sender.ID != "42" || m.ChatID != "42" || m.ChatType != channel.ChatDirect {
		t.Fatalf("the answer %+v (action %+v)", m, m.Action)
	}
	// A card with a Stop button is not a question.
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: "42", Text: "Working", Buttons: [][]channel.Button{{{ID: "/stop", Label: "Stop"}}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Permissions()); n != 1 {
		t.Errorf("%d prompts, want the question's only", n)
	}

	plain, _, _ := startBridge(t)
	if plain.Capabilities().Buttons {
		t.Error("buttons without the relay")
	}
}

// TestInboundMeta: the official servers' meta, as they write it.
func TestInboundMeta(t *testing.T) {
	t.Parallel()
	a := New()
	a.cfg = Config{}.withDefaults()
	for _, tc := range []struct {
		name, params string
		check        func(channel.InboundMessage) bool
	}{
		{"telegram group with a document", `{"content":"see this","meta":{"chat_id":"-1001","message_id":"77","user":"alice","user_id":"1001","ts":"2026-03-01T10:00:00.000Z","attachment_kind":"document","attachment_file_id":"BQAC","attachment_size":"2048","attachment_mime":"application/pdf","attachment_name":"a.pdf"}}`,
			func(m channel.InboundMessage) bool {
				return m.ChatType == channel.ChatGroup && m.Sender.ID == "1001" && m.Sender.Username == "alice" && m.MessageID == "77" &&
					m.Timestamp.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) && len(m.Media) == 1 &&
					m.Media[0] == channel.Media{Kind: channel.MediaDocument, Ref: "file:BQAC", MIME: "application/pdf", Size: 2048, Filename: "a.pdf"}
			}},
		{"telegram private photo", `{"content":"(photo)","meta":{"chat_id":"1001","message_id":"78","user":"alice","user_id":"1001","ts":"2026-03-01T10:00:00Z","image_path":"/home/u/.claude/channels/telegram/inbox/1.jpg"}}`,
			func(m channel.InboundMessage) bool {
				return m.ChatType == channel.ChatDirect && len(m.Media) == 1 && m.Media[0].Kind == channel.MediaImage && m.Media[0].Ref == "path:/home/u/.claude/channels/telegram/inbox/1.jpg"
			}},
		{"fakechat", `{"content":"hi","meta":{"chat_id":"web","message_id":"u1","user":"web","ts":"2026-03-01T10:00:00Z"}}`,
			func(m channel.InboundMessage) bool {
				return m.ChatType == channel.ChatDirect && m.Sender.ID == "web" && m.Text == "hi" && len(m.Media) == 0
			}},
		{"imessage without user_id", `{"content":"yo","meta":{"chat_id":"iMessage;-;+15551234567","message_id":"G1","user":"+15551234567","ts":"2026-03-01T10:00:00Z"}}`,
			func(m channel.InboundMessage) bool {
				return m.Sender.ID == "+15551234567" && m.ChatID == "iMessage;-;+15551234567" && m.ChatType == channel.ChatGroup
			}},
		{"no message id: one made of the event", `{"content":"x","meta":{"chat_id":"c","user":"u"}}`,
			func(m channel.InboundMessage) bool {
				return strings.HasPrefix(m.MessageID, "h") && len(m.MessageID) == 17
			}},
	} {
		m, err := a.inbound(json.RawMessage(tc.params))
		if err != nil || !tc.check(m) {
			t.Errorf("%s: %+v, %v", tc.name, m, err)
		}
	}
	if _, err := a.inbound(json.RawMessage(`{"content":"x","meta":{"user":"u"}}`)); err == nil {
		t.Error("an event without chat_id was taken")
	}
}
