package e2e

// A live terminal claude attached to an owner's chat (issue 77 part 3):
// `clawhost channel`, the real binary, driven over stdio by an MCP client
// that speaks the channel contract as Claude Code 2.1.330 does (claude
// itself refuses channels without a claude.ai login and its online feature
// gate: see docs/channels-mcp.md). The host is the real binary with the
// real telegram plugin against the fake Bot API and the real claude CLI
// against the fake Anthropic API.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/mcpchannel/mcpchanneltest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// terminal plays the terminal claude: it starts `clawhost channel`, reads
// its channel notifications and calls its reply tool.
type terminal struct {
	t       *testing.T
	session *mcp.ClientSession
	tap     *mcpchanneltest.Tap
	log     *sdktest.Log
	cmd     *exec.Cmd

	mu    sync.Mutex
	notes []jsonrpc.Request // notifications/claude/* received
}

func startTerminal(t *testing.T, cfg string, args ...string) *terminal {
	t.Helper()
	cmd := Command(t, cfg, append([]string{"channel"}, args...)...)
	// Command puts -config before the subcommand's name; the subcommand
	// comes first.
	cmd.Args = append([]string{cmd.Args[0], "channel", "-config", cfg}, args...)
	term := &terminal{t: t, log: &sdktest.Log{}, cmd: cmd}
	cmd.Stderr = term.log
	tr := &mcpchanneltest.Tap{Inner: &mcp.CommandTransport{Command: cmd}, In: func(r *jsonrpc.Request) {
		term.mu.Lock()
		term.notes = append(term.notes, *r)
		term.mu.Unlock()
	}}
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.1.330"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting to clawhost channel: %v\n%s", err, term.log.String())
	}
	term.session, term.tap = s, tr
	t.Cleanup(func() {
		_ = s.Close()
		if t.Failed() {
			t.Logf("clawhost channel's log:\n%s", term.log.String())
		}
	})
	return term
}

// note waits for a notification of method whose params contain want and
// returns its params.
func (term *terminal) note(method, want string, from int) (map[string]any, int) {
	term.t.Helper()
	var got map[string]any
	at := 0
	sdktest.WaitFor(term.t, method+" with "+want, func() bool {
		term.mu.Lock()
		defer term.mu.Unlock()
		for i := from; i < len(term.notes); i++ {
			n := term.notes[i]
			if n.Method == method && strings.Contains(string(n.Params), want) {
				_ = json.Unmarshal(n.Params, &got)
				at = i + 1
				return true
			}
		}
		return false
	})
	return got, at
}

func (term *terminal) reply(chat, text string, files ...string) *mcp.CallToolResult {
	term.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := map[string]any{"chat_id": chat, "text": text}
	if len(files) > 0 {
		args["files"] = files
	}
	res, err := term.session.CallTool(ctx, &mcp.CallToolParams{Name: "reply", Arguments: args})
	if err != nil {
		term.t.Fatal(err)
	}
	return res
}

// TestAttachTerminalTelegram: a terminal attached to the owner's Telegram
// DM answers the chat through its reply tool (no clawhost-run claude
// runs); a permission prompt it relays becomes the chat's Allow button and
// the press goes back to it; /stop ends its turn and tells it; clawhost SIGKILLed while the terminal holds a
// message gives it to the terminal again once it reconnected, and the chat
// gets one answer; when the terminal
// exits, the chat's clawhost-run claude answers with the terminal's
// history; /detach gives the chat its own session back; a non-owner's
// chat and a group with a non-owner can neither be attached nor /detach;
// the status and the audit trail show the attachment.
func TestAttachTerminalTelegram(t *testing.T) {
	rig := newTgClaude(t)
	fake, srv, dir := rig.fake, rig.srv, rig.dir
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	adminAddr := sdktest.FreeAddr(t)
	d := rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "60s", "approvals": "chat", "sandbox": "off"}),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1002"}, "owners": []string{"tg:1001"},
			"groups": []string{"tg:-1001234500077"}, "group_allow_from": []string{"tg:1001", "tg:1002"}, "require_mention": true},
		Admin:    Attrs{"listen": adminAddr},
		Messages: Attrs{"streaming": "off"},
	})
	cfg := d.ConfigPath()
	alice, bob := tgUser(tgAlice, "Alice"), tgUser(1002, "Bob")
	aliceChat, bobChat := telegramtest.PrivateChat(tgAlice), telegramtest.PrivateChat(1002)

	// The terminal's own session: a real claude -p run in the workspace,
	// with a config directory of its own.
	termCfg := filepath.Join(dir, "terminal-claude")
	sid := uuid.NewString()
	fake.Enqueue(anthropictest.Reply{Text: "Noted: platypus."})
	tc := exec.Command(rig.bin, "-p", "remember the word platypus", "--session-id", sid, "--output-format", "json")
	tc.Dir = ws
	tc.Env = []string{"HOME=" + filepath.Join(dir, "terminal-home"), "CLAUDE_CONFIG_DIR=" + termCfg, "ANTHROPIC_BASE_URL=" + fake.URL(),
		"ANTHROPIC_API_KEY=test", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "PATH=" + os.Getenv("PATH")}
	if out, err := tc.CombinedOutput(); err != nil {
		t.Fatalf("the terminal's claude -p: %v\n%s", err, out)
	}
	transcripts, _ := filepath.Glob(filepath.Join(termCfg, "projects", "*", sid+".jsonl"))
	if len(transcripts) != 1 {
		t.Fatalf("the terminal's transcript: %v", transcripts)
	}

	// Both chats talk once (the host learns them), answered by the chat's
	// own claude.
	fake.Enqueue(anthropictest.Reply{Text: "Hello Alice, from the chat's claude."})
	srv.PushText(aliceChat, alice, "hello")
	tgWaitMessage(t, srv, tgAlice, "Hello Alice, from the chat's claude.")
	fake.Enqueue(anthropictest.Reply{Text: "Hello Bob."})
	srv.PushText(bobChat, bob, "hi")
	tgWaitMessage(t, srv, 1002, "Hello Bob.")

	group := telegramtest.Supergroup(-1001234500077, "Team")
	fake.Enqueue(anthropictest.Reply{Text: "Hello team."})
	srv.PushText(group, alice, "@clawbot hello team")
	tgWaitMessage(t, srv, -1001234500077, "Hello team.")

	// A non-owner's chat and a group with a non-owner are refused.
	for chat, why := range map[string]string{"tg:1002": "only an owner may do this", "tg:-1001234500077": "only in a chat nobody but owners can reach"} {
		refused := Command(t, cfg)
		refused.Args = []string{refused.Args[0], "channel", "-config", cfg, "-chat", chat}
		stdin, _, err := os.Pipe() // claude's stdin stays open while it runs
		if err != nil {
			t.Fatal(err)
		}
		refused.Stdin = stdin
		out, err := refused.CombinedOutput()
		_ = stdin.Close()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), why) {
			t.Fatalf("attaching to %s: %v\n%s", chat, err, out)
		}
	}

	term := startTerminal(t, cfg, "-chat", "tg:1001", "-session", sid, "-transcript", transcripts[0])
	sdktest.WaitFor(t, "the terminal attached", func() bool { return strings.Contains(term.log.String(), "attached to tg:1001") })
	// The operator sees it.
	var status, serr bytes.Buffer
	run([]string{"status", "-config", cfg}, &status, &serr)
	if !strings.Contains(status.String(), "terminal attached: tg:1001 (session agent:main:tg:direct:1001, terminal session "+sid) {
		t.Fatalf("clawhost status:\n%s%s", status.String(), serr.String())
	}

	// The chat's message goes to the terminal; its reply to the chat.
	before := fake.Count()
	srv.PushText(aliceChat, alice, "what are you working on?")
	msg, at := term.note("notifications/claude/channel", "what are you working on?", 0)
	meta, _ := msg["meta"].(map[string]any)
	if meta["chat_id"] != "tg:1001" {
		t.Fatalf("channel event meta %v", meta)
	}
	if res := term.reply("tg:1001", "The parser, from the terminal."); res.IsError {
		t.Fatalf("reply: %+v", res.Content)
	}
	tgWaitMessage(t, srv, tgAlice, "The parser, from the terminal.")
	if fake.Count() != before {
		t.Fatal("a clawhost-run claude ran while the terminal was attached")
	}
	// A reply with nothing to answer is refused, not sent.
	if res := term.reply("tg:1001", "unasked"); !res.IsError {
		t.Fatal("a reply with no message waiting was taken")
	}

	// A permission prompt becomes the chat's buttons; Allow goes back.
	srv.PushText(aliceChat, alice, "run the tests")
	_, at = term.note("notifications/claude/channel", "run the tests", at)
	if err := term.tap.Notify(context.Background(), "notifications/claude/channel/permission_request", map[string]string{
		"request_id": "abcde", "tool_name": "Bash", "description": "run the tests", "input_preview": `{"command":"go test ./..."}`}); err != nil {
		t.Fatal(err)
	}
	q := tgWaitMessage(t, srv, tgAlice, "Bash", "go test ./...")
	pressed := false
	for _, row := range q.Keyboard {
		for _, b := range row {
			if b.Text == "Allow" {
				if _, err := srv.PressButton(aliceChat, q.MessageID, b.Data, alice); err != nil {
					t.Fatal(err)
				}
				pressed = true
			}
		}
	}
	if !pressed {
		t.Fatalf("no Allow under %+v", q.Keyboard)
	}
	perm, _ := term.note("notifications/claude/channel/permission", "abcde", 0)
	if perm["behavior"] != "allow" {
		t.Fatalf("permission answer %v", perm)
	}
	// The reply's file (in the workspace) reaches the chat.
	report := filepath.Join(ws, "report.txt")
	if err := os.WriteFile(report, []byte("ok 42 tests"), 0o644); err != nil {
		t.Fatal(err)
	}
	term.reply("tg:1001", "Tests pass.", report)
	tgWaitMessage(t, srv, tgAlice, "Tests pass.")
	sdktest.WaitFor(t, "the report in the chat", func() bool {
		for _, m := range srv.Sent() {
			if m.File != nil && m.File.Filename == "report.txt" && string(m.File.Data) == "ok 42 tests" {
				return true
			}
		}
		return false
	})

	// /stop while the terminal works on a message: the turn ends, the
	// terminal is told, and its late reply is refused.
	srv.PushText(aliceChat, alice, "a long job")
	_, at = term.note("notifications/claude/channel", "a long job", at)
	srv.PushText(aliceChat, alice, "/stop")
	_, at = term.note("notifications/claude/channel", "The chat pressed Stop", at)
	if res := term.reply("tg:1001", "too late"); !res.IsError {
		t.Fatal("a reply to a stopped message was taken")
	}

	// clawhost SIGKILLed while the terminal holds a message: after the
	// restart the message is answered once.
	srv.PushText(aliceChat, alice, "survive the kill")
	_, at = term.note("notifications/claude/channel", "survive the kill", at)
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.spawn()
	answered := func() int { return tgCount(srv, tgAlice, "surviv") }
	sdktest.WaitFor(t, "the message answered after the restart", func() bool {
		term.mu.Lock()
		again := false
		for _, n := range term.notes[at:] {
			again = again || (n.Method == "notifications/claude/channel" && strings.Contains(string(n.Params), "survive the kill"))
		}
		term.mu.Unlock()
		if again { // the journal gave it to the reattached terminal again
			return true
		}
		if answered() > 0 {
			t.Fatal("after the restart the chat's claude answered the message the terminal held, instead of waiting for it to reattach")
		}
		return false
	})
	if res := term.reply("tg:1001", "I survive."); res.IsError {
		t.Fatalf("reply after the restart: %+v", res.Content)
	}
	tgWaitMessage(t, srv, tgAlice, "I survive.")
	time.Sleep(2 * time.Second) // on purpose: a second answer would come within this
	if n := answered(); n != 1 {
		t.Fatalf("%d answers to the message held across the kill, want 1", n)
	}

	// The terminal exits: the chat's claude resumes its session.
	_ = term.session.Close()
	sdktest.WaitFor(t, "clawhost channel to exit", func() bool { return term.cmd.ProcessState != nil })
	n := fake.Count()
	fake.Enqueue(anthropictest.Reply{Text: "The word was platypus."})
	srv.PushText(aliceChat, alice, "which word did I ask you to remember?")
	tgWaitMessage(t, srv, tgAlice, "The word was platypus.")
	body := string(fake.Requests()[n].Body)
	if !strings.Contains(body, "remember the word platypus") || !strings.Contains(body, "Noted: platypus.") {
		t.Fatalf("the fallback claude's request lacks the terminal's history:\n%s", body)
	}

	// /detach: back to the chat's own session.
	srv.PushText(aliceChat, alice, "/detach")
	tgWaitMessage(t, srv, tgAlice, "Back to this chat's own session")
	n = fake.Count()
	fake.Enqueue(anthropictest.Reply{Text: "Own session again."})
	srv.PushText(aliceChat, alice, "and now?")
	tgWaitMessage(t, srv, tgAlice, "Own session again.")
	if body := string(fake.Requests()[n].Body); strings.Contains(body, "platypus") || !strings.Contains(body, "hello") {
		t.Fatalf("after /detach the chat is not in its own session:\n%s", body)
	}
	// Bob may not /detach, nor may Alice in a group with Bob.
	srv.PushText(bobChat, bob, "/detach")
	tgWaitMessage(t, srv, 1002, "Only an owner")
	srv.PushText(group, alice, "/detach@clawbot")
	tgWaitMessage(t, srv, -1001234500077, "/detach: only in a chat nobody but owners can reach")

	// The audit trail has the attachment, its end and the refusals.
	var audit, aerr bytes.Buffer
	if rc := run([]string{"audit", "-kind", "attach", "-config", cfg}, &audit, &aerr); rc != 0 {
		t.Fatalf("clawhost audit: rc %d %s", rc, aerr.String())
	}
	for _, want := range []string{"attach", "detach"} {
		if !strings.Contains(audit.String(), want) {
			t.Errorf("the audit trail lacks %q:\n%s", want, audit.String())
		}
	}
}
