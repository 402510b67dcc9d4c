package e2e

// Host-level tests of the Slack channel: the real clawhost binary runs the
// real clawhost-slack plugin process against the fake Slack
// (plugins/slack/slacktest: Web API and Socket Mode on loopback), with the
// real claude CLI against the fake Anthropic API. Everything the bot says
// is read back from the fake's channels.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const (
	slBotToken = "xoxb-e2e-bot-secret"
	slAppToken = "xapp-e2e-app-secret"
)

// Users of the tests: Alice is an owner writing by DM; Bob talks in
// #general.
var (
	slAlice = slacktest.User{ID: "U0ALICE", Name: "alice", DisplayName: "Alice"}
	slBob   = slacktest.User{ID: "U0BOB", Name: "bob"}
)

// slEnv is a fake Slack and a clawhost with the slack plugin on it.
type slEnv struct {
	d       *daemon
	srv     *slacktest.Server
	fake    *anthropictest.Server
	cfgPath string
	dm      string // Alice's DM
	general string
	ws      string
}

// chatApprovals is a host modifier: the agent's tool questions go to the
// chat, unanswered after timeout, and its tools run unsandboxed (they
// touch files outside the workspace).
func chatApprovals(timeout string) func(*Host) {
	return func(h *Host) {
		h.Agent.Attrs["approvals"] = "chat"
		h.Agent.Attrs["approval_timeout"] = timeout
		h.Agent.Attrs["sandbox"] = "off"
	}
}

// startSlackDaemon starts the fake Slack and a clawhost on it with the real
// claude CLI, and returns once the socket is up.
func startSlackDaemon(t *testing.T, mods ...func(*Host)) *slEnv {
	t.Helper()
	fake, mod, ws := realClaudeIn(t)
	srv := slacktest.NewServer(slBotToken, slAppToken)
	e := &slEnv{srv: srv, fake: fake, ws: ws}
	e.dm = srv.AddDM(slAlice).ID
	srv.AddUser(slBob)
	e.general = srv.AddChannel(slacktest.Channel{Name: "general"}).ID
	h := Host{
		Dir: t.TempDir(),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"sl:" + slAlice.ID}, "owners": []string{"sl:" + slAlice.ID},
			"groups": []string{"sl:" + e.general}, "group_allow_from": []string{"sl:*"}, "require_mention": true},
		Admin: Attrs{"listen": ""},
		Plugins: []Plugin{{Name: "sl", Source: "slack", Config: Attrs{
			"bot_token": slBotToken, "app_token": slAppToken, "api_endpoint": srv.Endpoint()}}},
	}
	e.d = launchOn(t, h, platform{name: "slack", close: srv.Close, requests: func() string { return slRequestLog(srv) }}, append([]func(*Host){mod}, mods...)...)
	e.cfgPath = e.d.ConfigPath()
	e.connected(t, 1)
	return e
}

// connected waits for the n-th Socket Mode connection.
func (e *slEnv) connected(t *testing.T, n int) {
	t.Helper()
	bounded(t, "the Socket Mode connection", func(ctx context.Context) error { return e.srv.WaitConnected(ctx, n) })
}

func slRequestLog(srv *slacktest.Server) string {
	return requestLog(srv.Requests(""), func(r slacktest.Request) (time.Time, string) {
		return r.Time, fmt.Sprintf("%s %d %s %q", r.Method, r.Status, r.Form.Get("channel"), clip(r.Form.Get("text"), 60))
	})
}

// waitMessage waits until one of the bot's messages in channel (thread ""
// any) shows all of wants, and returns it.
func (e *slEnv) waitMessage(t *testing.T, channel, thread string, wants ...string) slacktest.Message {
	t.Helper()
	var found slacktest.Message
	ctx, cancel := context.WithTimeout(context.Background(), tgWait)
	defer cancel()
	err := e.srv.Wait(ctx, fmt.Sprintf("a message in %s showing %q", channel, wants), func() bool {
		var ok bool
		found, ok = showing(e.srv.BotMessages(channel, thread), func(m slacktest.Message) string { return m.Text }, wants)
		return ok
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// count is how many of the bot's messages in channel show s.
func (e *slEnv) count(channel, s string) int {
	return countShowing(e.srv.BotMessages(channel, ""), func(m slacktest.Message) string { return m.Text }, s)
}

// settle waits until the fake saw no request for quiet.
func (e *slEnv) settle(t *testing.T, quiet time.Duration) {
	t.Helper()
	waitQuiet(t, quiet, func() time.Time {
		rs := e.srv.Requests("")
		if len(rs) == 0 {
			return time.Time{}
		}
		return rs[len(rs)-1].Time
	})
}

func slMention(text string) string { return "<@" + slacktest.BotUserID + "> " + text }

// TestSlackChannel runs one daemon and checks, conversation by
// conversation, what a Slack user sees: a DM answered once; a channel
// message without a mention not answered, a mention answered in the
// channel and a reply in its thread answered in the thread; a long reply
// split within 4,000 characters with its code fence closed and reopened;
// a file both ways.
func TestSlackChannel(t *testing.T) {
	t.Parallel()
	e := startSlackDaemon(t)

	// A DM, answered once.
	e.fake.Enqueue(anthropictest.Reply{Text: "Hello **Alice**."})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "hi there"})
	e.waitMessage(t, e.dm, "", "Hello *Alice*.")
	if !strings.Contains(e.fake.Requests()[0].LastUserText(), "hi there") {
		t.Errorf("claude did not get the DM: %q", e.fake.Requests()[0].LastUserText())
	}

	// #general: chatter is not answered; a mention is, in the channel; a
	// reply in its thread is answered in the thread.
	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: "just chatting"})
	e.fake.Enqueue(anthropictest.Reply{Text: "Channel answer."})
	ts, _ := e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: slMention("what did I say?")})
	m := e.waitMessage(t, e.general, "", "Channel answer.")
	if m.ThreadTS != "" {
		t.Errorf("the channel answer went into a thread: %+v", m)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Thread answer."})
	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: slMention("and in a thread?"), ThreadTS: ts})
	e.waitMessage(t, e.general, ts, "Thread answer.")
	if n := len(e.srv.BotMessages(e.general, "")); n != 2 {
		t.Errorf("%d bot messages in #general, want 2 (the chatter is not answered): %+v", n, e.srv.BotMessages(e.general, ""))
	}

	// A long reply with a long code block: every message within 4,000
	// UTF-16 units, the fence closed in one and reopened in the next.
	var code strings.Builder
	for i := range 150 {
		fmt.Fprintf(&code, "line %03d: some code that fills the block with text\n", i)
	}
	long := "Here is the listing:\n\n```\n" + code.String() + "```\n\nThat is all."
	e.fake.Enqueue(anthropictest.Reply{Text: long})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "show me the listing"})
	e.waitMessage(t, e.dm, "", "That is all.")
	e.settle(t, 500*time.Millisecond)
	var parts []slacktest.Message
	for _, m := range e.srv.BotMessages(e.dm, "") {
		if strings.Contains(m.Text, "line ") {
			parts = append(parts, m)
		}
	}
	if len(parts) < 2 {
		t.Fatalf("the long reply came in %d messages", len(parts))
	}
	for i, p := range parts {
		if n := len(utf16.Encode([]rune(p.Text))); n > 4000 {
			t.Errorf("part %d has %d units", i, n)
		}
		if strings.Count(p.Text, "```")%2 != 0 {
			t.Errorf("part %d has an unclosed fence:\n%s", i, p.Text)
		}
	}
	if !strings.Contains(strings.Join(texts(parts), ""), "line 149") {
		t.Error("the end of the listing is missing")
	}

	// Files: one Alice shares is downloaded for claude; send_file uploads
	// one into the DM.
	f := e.srv.AddFile("notes.txt", "text/plain", []byte("the shared notes"))
	e.fake.Enqueue(anthropictest.Reply{Text: "Got your notes."})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "read this", Files: []slacktest.File{f}})
	e.waitMessage(t, e.dm, "", "Got your notes.")
	if len(e.srv.Requests("file")) == 0 {
		t.Error("the shared file was not downloaded")
	}
	e.fake.Enqueue(sendFile("report.txt", "the report"), anthropictest.Reply{Text: "Here it is."})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "send me the report"})
	e.waitMessage(t, e.dm, "", "Here it is.")
	e.settle(t, 500*time.Millisecond)
	sent := 0
	for _, f := range e.srv.Files() {
		if f.Name == "report.txt" && string(f.Data) == "quarterly numbers" && f.Channel == e.dm {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("report.txt uploaded %d times: %+v", sent, e.srv.Files())
	}
	if e.count(e.dm, "Hello *Alice*.") != 1 {
		t.Error("the DM was answered more than once")
	}
}

func texts(ms []slacktest.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// slButton is the action id of the button under m whose label contains
// with label.
func slButton(t *testing.T, m slacktest.Message, label string) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.Contains(b.Label, label) {
			return b.ActionID
		}
	}
	t.Fatalf("no button %q under %+v", label, m.Buttons())
	return ""
}

// TestSlackCardAndApproval: a slow turn's card carries a Stop button and
// becomes the answer; Stop pressed on the next card stops that turn; a
// tool question reaches the owner with Block Kit buttons and her Allow
// runs the command.
func TestSlackCardAndApproval(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	e := startSlackDaemon(t, chatApprovals("30s"))
	e.fake.Enqueue(anthropictest.Reply{Text: "The slow answer.", HeaderDelay: 7 * time.Second})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "think hard"})
	card := e.waitMessage(t, e.dm, "", "Working")
	slButton(t, card, "Stop")
	answer := e.waitMessage(t, e.dm, "", "The slow answer.")
	if answer.TS != card.TS || len(answer.Buttons()) != 0 {
		t.Errorf("the answer %+v did not replace the card %s (or kept its button)", answer, card.TS)
	}

	e.fake.Enqueue(anthropictest.Reply{Text: "never shown", HeaderDelay: time.Minute})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "long task"})
	sdktest.WaitFor(t, "a second card", func() bool {
		for _, m := range e.srv.BotMessages(e.dm, "") {
			if m.TS != card.TS && strings.Contains(m.Text, "Working") {
				card = m
				return true
			}
		}
		return false
	})
	env, err := e.srv.Press(slAlice.ID, e.dm, card.TS, slButton(t, card, "Stop"))
	if err != nil {
		t.Fatal(err)
	}
	stopped := e.waitMessage(t, e.dm, "", "Stopped after")
	if stopped.TS != card.TS || len(stopped.Buttons()) != 0 {
		t.Errorf("the stopped card %+v", stopped)
	}
	sdktest.WaitFor(t, "the press acknowledged", func() bool { return e.srv.Acked(env) })

	// A tool question: Alice's Allow runs the command.
	target := filepath.Join(outside, "allowed")
	e.fake.Enqueue(anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash",
		Input: map[string]any{"command": "touch " + target, "description": "create a file"}}},
		anthropictest.Reply{Text: "Created it."})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "please create the file"})
	q := e.waitMessage(t, e.dm, "", "claude wants to use Bash", "touch "+target)
	if _, err := e.srv.Press(slAlice.ID, e.dm, q.TS, slButton(t, q, "Allow")); err != nil {
		t.Fatal(err)
	}
	slButton(t, q, "Deny")
	e.waitMessage(t, e.dm, "", "Created it.")
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
}

// TestSlackReconnectAndKill: a disconnect envelope (refresh_requested)
// makes the plugin connect again with nothing lost; a kill -9 of the
// plugin process while a message waits is followed by a restart that
// answers it once.
func TestSlackReconnectAndKill(t *testing.T) {
	t.Parallel()
	e := startSlackDaemon(t)
	if err := e.srv.Disconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	e.connected(t, 2)
	e.fake.Enqueue(anthropictest.Reply{Text: "After the refresh."})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "still there?"})
	e.waitMessage(t, e.dm, "", "After the refresh.")

	// kill -9 the plugin; a message posted meanwhile is sent again by the
	// fake on the restarted plugin's connection and answered once.
	pid := slPluginPID(e.d, 0)
	if pid == 0 {
		t.Fatal("no clawhost-slack process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Answered after the crash."})
	e.srv.Post(slacktest.Message{Channel: e.dm, User: slAlice.ID, Text: "are you back?"})
	e.connected(t, 3)
	e.waitMessage(t, e.dm, "", "Answered after the crash.")
	e.settle(t, time.Second)
	if n := e.count(e.dm, "Answered after the crash."); n != 1 {
		t.Errorf("answered %d times", n)
	}
}

// slPluginPID is the clawhost-slack child of the daemon other than not.
func slPluginPID(d *daemon, not int) int { return pluginPID(d, "clawhost-slack", not) }

// TestSlackInvalidAuth: a bot token Slack rejects shows as needs_attention
// in clawhost status, with what to do.
func TestSlackInvalidAuth(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(slBotToken, slAppToken)
	srv.RevokeBotToken()
	h := Host{
		Dir:   t.TempDir(),
		Admin: Attrs{"listen": sdktest.FreeAddr(t)},
		Plugins: []Plugin{{Name: "sl", Source: "slack", Config: Attrs{
			"bot_token": slBotToken, "app_token": slAppToken, "api_endpoint": srv.Endpoint()}}},
	}
	cfg := h.Write(t)
	t.Cleanup(srv.Close)
	d := Launch(t, cfg)
	var out string
	d.waitFor(func() bool { _, out = statusOut(cfg); return strings.Contains(out, "needs_attention") }, "sl needs_attention")
	if !strings.Contains(out, "invalid_auth") {
		t.Errorf("status does not say why:\n%s", out)
	}
	if strings.Contains(out, slBotToken) || strings.Contains(d.Log(), slBotToken) {
		t.Error("the token shows")
	}
}

// TestSlackDoctor: clawhost doctor runs the slack plugin's probe — the bot
// named with its scopes ok, both tokens checked; a scope taken away is
// named (missing_scope chat:write: a failure, exit 1); no token printed.
func TestSlackDoctor(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	srv := slacktest.NewServer(slBotToken, slAppToken)
	defer srv.Close()
	doctor := func() (int, string) {
		dir := t.TempDir()
		agent := RealClaude(bin, filepath.Join(dir, "home"), "http://127.0.0.1:9", Attrs{"workspace": filepath.Join(dir, "workspace")})
		cfg := (&Host{Dir: dir, Agent: agent, Admin: Attrs{"listen": ""}, Plugins: []Plugin{
			{Name: "sl", Source: "slack", Config: Attrs{"bot_token": slBotToken, "app_token": slAppToken, "api_endpoint": srv.Endpoint()}},
		}}).Write(t)
		var out, errb bytes.Buffer
		rc := run([]string{"doctor", "-config", cfg}, &out, &errb)
		return rc, out.String() + errb.String()
	}
	rc, out := doctor()
	if rc != 0 || !strings.Contains(out, "Slack accepts the bot token: the bot is @clawbot") || !strings.Contains(out, "every scope clawhost uses") ||
		!strings.Contains(out, "Socket Mode connections") {
		t.Errorf("a working app: exit %d\n%s", rc, out)
	}
	srv.RemoveScope("chat:write")
	rc, out = doctor()
	if rc != 1 || !strings.Contains(out, "missing_scope: chat:write") || strings.Contains(out, slBotToken) || strings.Contains(out, slAppToken) {
		t.Errorf("without chat:write: exit %d\n%s", rc, out)
	}
}

// TestInitSlackInTerminal: clawhost init in a real terminal offers the
// slack plugin it finds in the plugin directory, asks its tokens hidden,
// shows its probe (a refused bot token, then the bot and its scopes) and
// writes plugin "slack" with the tokens in clawhost.env and the preset
// api_endpoint (-set) in the block.
func TestInitSlackInTerminal(t *testing.T) {
	e := newInitEnv(t)
	srv := slacktest.NewServer(slBotToken, slAppToken)
	t.Cleanup(srv.Close)
	term := e.startInit(t, "-set", "slack.api_endpoint="+srv.Endpoint())
	scr := term.waitFor("Channels to set up", 0)
	// What the plugin directory holds: init's own channels in its order,
	// then the other channel plugins sorted, Slack among them; no plugin
	// that is not a channel (git, memory, voice).
	m := regexp.MustCompile(`Channels to set up, comma-separated: ([a-z, -]+) \[`).FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("no channel prompt:\n%s", scr)
	}
	offered := strings.Split(m[1], ", ")
	if !strings.HasPrefix(m[1], "telegram, discord, whatsapp, webchat, ") || !slices.Contains(offered, "slack") || !slices.IsSorted(offered[4:]) ||
		slices.ContainsFunc(offered, func(c string) bool { return c == "git" || c == "memory" || c == "voice" }) {
		t.Errorf("init offers %q:\n%s", offered, scr)
	}
	term.send("slack")
	term.dialog(
		see("From an app manifest"),
		see("- chat:write"),
		ask("bot_token", "xoxb-wrong"),
		ask("app_token", slAppToken),
		ask("signing_secret", ""),
		see("invalid_auth"),
		askAgain("bot_token", 1, slBotToken),
		askAgain("app_token", 1, slAppToken),
		askAgain("signing_secret", 1, ""),
		see("✓ slack: the bot @clawbot"),
		ask("Workspace of the agent", ""),
		ask("Choose 1, 2 or 3", "3"),
	)
	scr = term.exited()
	if strings.Contains(scr, slBotToken) || strings.Contains(scr, slAppToken) {
		t.Errorf("a token was echoed:\n%s", scr)
	}
	cfgPath := filepath.Join(e.home, ".config", "clawhost", "config.hcl")
	cfg, _ := os.ReadFile(cfgPath)
	envf, _ := os.ReadFile(filepath.Join(e.home, ".config", "clawhost", "clawhost.env"))
	if !strings.Contains(string(cfg), `bot_token = env("SLACK_BOT_TOKEN")`) || strings.Contains(string(cfg), slBotToken) ||
		!strings.Contains(string(envf), slBotToken) || !strings.Contains(string(cfg), srv.Endpoint()) {
		t.Fatalf("config:\n%s", cfg)
	}
}
