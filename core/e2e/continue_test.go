package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// tgAsk sends text to chat as from and returns the bot's first new
// message there (a command's answer is one message, never edited).
func tgAsk(t *testing.T, srv *telegramtest.Server, chat telegramtest.Chat, from telegramtest.User, text string) string {
	t.Helper()
	before := len(tgChat(srv, chat.ID))
	srv.PushText(chat, from, text)
	var got string
	sdktest.WaitFor(t, fmt.Sprintf("the bot's answer to %q in chat %d", text, chat.ID), func() bool {
		if msgs := tgChat(srv, chat.ID); len(msgs) > before {
			got = msgs[before].Visible
			return true
		}
		return false
	})
	return got
}

// TestContinueTerminalSessionTelegram (issue 77, docs/continue.md): an
// owner's own claude sessions, made by the real CLI run as a terminal
// would (its own HOME and CLAUDE_CONFIG_DIR, agent.owner_claude_dir), are
// listed in the owner's Telegram DM — the real telegram plugin against the
// fake Bot API — with claude's title or the first prompt; one is continued
// (forked: the next request to the API carries its history, the
// terminal's file stays byte for byte) and handed back with /desktop,
// whose command — run as printed, with -p added so it needs no terminal —
// resumes with the chat's turn; another is taken over and handed back
// under its own id; /name, /list and /switch NAME go between the two.
// A non-owner's DM, and a group with a non-owner in it,
// are refused every command and nothing is copied; the audit trail has
// each step.
func TestContinueTerminalSessionTelegram(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close) // after the host stops (cleanups run last first)
	const groupID = -1001234500077
	var ownerDir, ownerHome, ws string
	h := startClaudeHost(t, clOptions{
		plugins: []Plugin{tgPlugin(srv.APIEndpoint())},
		access: Attrs{"allow_from": []string{"tg:1001", "tg:1002"}, "owners": []string{"tg:1001"},
			"groups": []string{fmt.Sprint("tg:", groupID)}, "group_allow_from": []string{"tg:1001", "tg:1002"}, "require_mention": false},
		messages: Attrs{"streaming": "off"},
		setup: func(dir string) {
			ws, ownerDir, ownerHome = filepath.Join(dir, "workspace"), filepath.Join(dir, "owner-claude"), filepath.Join(dir, "owner-home")
			for _, d := range []string{ws, ownerHome} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		},
		agent:  Attrs{"owner_claude_dir": "./owner-claude"},
		status: true, // clawhost sessions reads the running host through it
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(srv))
		}
	})
	sdktest.WaitFor(t, "the plugin's first getUpdates", func() bool { return len(srv.Requests("getUpdates")) > 0 })
	alice, bob := tgUser(tgAlice, "Alice"), tgUser(1002, "Bob")
	aliceDM, bobDM, group := telegramtest.PrivateChat(tgAlice), telegramtest.PrivateChat(1002), telegramtest.Supergroup(groupID, "Team")
	ask := func(from telegramtest.User, chat telegramtest.Chat, text string) string {
		t.Helper()
		return tgAsk(t, srv, chat, from, text)
	}
	// turn is a message of Alice's DM that claude answers (the fake API
	// echoes it); it returns the API's request for it.
	turn := func(text string) string {
		t.Helper()
		n := h.fake.Count()
		srv.PushText(aliceDM, alice, text)
		tgWaitMessage(t, srv, tgAlice, "echo:", text)
		return strings.Join(h.request(n+1, time.Minute).UserTexts(), "\n")
	}

	// The terminal: the real CLI in the workspace, as the owner runs it.
	bin := filepath.Join(h.dir, "path")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.bin, filepath.Join(bin, "claude")); err != nil {
		t.Fatal(err)
	}
	termEnv := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + ownerHome, "CLAUDE_CONFIG_DIR=" + ownerDir,
		"ANTHROPIC_BASE_URL=" + h.fake.URL(), "ANTHROPIC_API_KEY=test", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	terminal := func(script string) string {
		t.Helper()
		c := exec.Command("sh", "-c", script)
		c.Dir, c.Env = ws, termEnv
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	const fixID, deployID = "11111111-2222-4333-8444-555555555555", "66666666-2222-4333-8444-555555555555"
	terminal("claude -p 'remember the word PELICAN' --name 'Fix the parser' --session-id " + fixID + " --output-format json")
	terminal("claude -p 'deploy the staging server' --session-id " + deployID + " --output-format json")
	proj := filepath.Join(ownerDir, "projects", strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '-'
	}, ws))
	fixFile, deployFile := filepath.Join(proj, fixID+".jsonl"), filepath.Join(proj, deployID+".jsonl")
	fixBefore, err := os.ReadFile(fixFile)
	if err != nil {
		t.Fatalf("the terminal's transcript is not where claude keeps it: %v", err)
	}
	// The deploy session was left a while ago: it does not look live.
	old := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(deployFile, old, old); err != nil {
		t.Fatal(err)
	}

	// Refused: Bob's DM (not an owner); the group, where Bob reads along,
	// to Alice (an owner) and to Bob. Nothing reaches the owner's files.
	for _, cmd := range []string{"/continue", "/continue 1", "/continue fix takeover", "/desktop"} {
		if got := ask(bob, bobDM, cmd); !strings.Contains(got, "Only an owner can use /") {
			t.Errorf("%s in a non-owner's DM: %q", cmd, got)
		}
		if got := ask(alice, group, cmd); !strings.Contains(got, "Not in this chat") || !strings.Contains(got, "use your direct chat") {
			t.Errorf("%s by an owner in a group with a non-owner: %q", cmd, got)
		}
		if got := ask(bob, group, cmd); !strings.Contains(got, "Only an owner can use /") {
			t.Errorf("%s by a non-owner in a group: %q", cmd, got)
		}
	}

	// Listed, newest first: the first prompt where claude has no title.
	list := ask(alice, aliceDM, "/continue")
	for _, want := range []string{"1. Fix the parser — ", "1 turns (11111111) · looks live\n", "2. deploy the staging server — ", "1 turns (66666666)\n"} {
		if !strings.Contains(list, want) {
			t.Errorf("/continue lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "(66666666) · looks live") {
		t.Errorf("a session left 10 minutes ago looks live:\n%s", list)
	}

	// Forked: the chat's next turn resumes the terminal's conversation.
	got := ask(alice, aliceDM, "/continue fix")
	m := regexp.MustCompile(`Forked into this chat as session ([0-9a-f]{8})`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("/continue fix: %q", got)
	}
	if texts := turn("which word did I ask you to remember?"); !strings.Contains(texts, "remember the word PELICAN") {
		t.Fatalf("the chat's turn does not carry the terminal's history:\n%s", texts)
	}
	if now, _ := os.ReadFile(fixFile); !bytes.Equal(now, fixBefore) {
		t.Fatalf("a fork changed the terminal's file (%d bytes, was %d)", len(now), len(fixBefore))
	}

	// Handed back: the command, run as printed, resumes the chat's version.
	desk := ask(alice, aliceDM, "/desktop")
	cmdRe := regexp.MustCompile(`(?m)^cd (\S+) && CLAUDE_CONFIG_DIR=(\S+) claude --resume ([0-9a-f-]{36})$`)
	c := cmdRe.FindStringSubmatch(desk)
	if c == nil || c[1] != ws || c[2] != ownerDir || !strings.HasPrefix(c[3], m[1]) {
		t.Fatalf("/desktop: %q", desk)
	}
	forkFile := filepath.Join(proj, c[3]+".jsonl")
	if fi, err := os.Stat(forkFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the handed-back transcript: %v, %v", fi, err)
	}
	n := h.fake.Count()
	terminal(c[0] + " -p 'and back at the desk' --output-format json")
	texts := strings.Join(h.request(n+1, time.Minute).UserTexts(), "\n")
	for _, want := range []string{"remember the word PELICAN", "which word did I ask you to remember?", "and back at the desk"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the terminal's resume lacks %q:\n%s", want, texts)
		}
	}
	if now, _ := os.ReadFile(fixFile); !bytes.Equal(now, fixBefore) {
		t.Fatal("the terminal's own file of the forked session changed")
	}

	// Taken over: the same id, handed back over the terminal's file,
	// which the chat's transcript extends.
	deployBefore, _ := os.ReadFile(deployFile)
	if got := ask(alice, aliceDM, "/continue deploy takeover"); !strings.Contains(got, "Taken over: this chat now goes on with session 66666666") {
		t.Fatalf("/continue deploy takeover: %q", got)
	}
	if texts := turn("is staging up?"); !strings.Contains(texts, "deploy the staging server") {
		t.Fatalf("the taken-over turn lacks the terminal's history:\n%s", texts)
	}
	if now, _ := os.ReadFile(deployFile); !bytes.Equal(now, deployBefore) {
		t.Fatal("the chat wrote the terminal's file before /desktop")
	}
	desk = ask(alice, aliceDM, "/desktop")
	if c := cmdRe.FindStringSubmatch(desk); c == nil || c[3] != deployID {
		t.Fatalf("/desktop after a takeover: %q", desk)
	}
	after, _ := os.ReadFile(deployFile)
	if !bytes.HasPrefix(after, deployBefore) || len(after) == len(deployBefore) || !bytes.Contains(after, []byte("is staging up?")) {
		t.Fatalf("the handed-back file does not extend the terminal's (%d bytes, was %d)", len(after), len(deployBefore))
	}
	// The terminal goes on; the chat's copy is now behind: never
	// overwritten silently.
	terminal("claude -p 'terminal again' --resume " + deployID + " --output-format json")
	ahead, _ := os.ReadFile(deployFile)
	if got := ask(alice, aliceDM, "/desktop"); !strings.Contains(got, "changed since the chat took it") {
		t.Errorf("/desktop over a file the terminal went on with: %q", got)
	}
	if now, _ := os.ReadFile(deployFile); !bytes.Equal(now, ahead) {
		t.Error("/desktop overwrote a terminal file that had gone on")
	}

	// Names: /list shows the fork (an earlier session now) with claude's
	// title, /switch takes a name, and back.
	if got := ask(alice, aliceDM, "/name staging rollout"); !strings.Contains(got, `now named "staging rollout"`) {
		t.Errorf("/name: %q", got)
	}
	list = ask(alice, aliceDM, "/list")
	if !strings.Contains(list, `This session: "staging rollout", `) || !strings.Contains(list, "1. Fix the parser, ") || !strings.Contains(list, "("+m[1]+")") {
		t.Errorf("/list:\n%s", list)
	}
	if got := ask(alice, aliceDM, "/switch fix the"); !strings.Contains(got, "Switched to") {
		t.Fatalf("/switch fix the: %q", got)
	}
	if texts := turn("and the parser?"); !strings.Contains(texts, "remember the word PELICAN") || strings.Contains(texts, "deploy the staging server") {
		t.Fatalf("after /switch the turn is not in the forked session:\n%s", texts)
	}
	if got := ask(alice, aliceDM, "/switch staging rollout"); !strings.Contains(got, "Switched to") {
		t.Fatalf("/switch staging rollout: %q", got)
	}

	// The audit trail: each step as owner_session rows, each refusal as a
	// command row with why.
	audit := func(kind string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if rc := run([]string{"audit", "-kind", kind, "-config", h.cfgPath}, &out, &errb); rc != 0 {
			t.Fatalf("clawhost audit -kind %s: rc %d %s", kind, rc, errb.String())
		}
		return out.String()
	}
	trail := audit("owner_session")
	for _, want := range []string{"listed", "forked", fixID, "taken over", deployID, "handed back", c[3], "refused"} {
		if !strings.Contains(trail, want) {
			t.Errorf("the owner_session trail lacks %q:\n%s", want, trail)
		}
	}
	if refusals := audit("command"); !strings.Contains(refusals, "owners only") || !strings.Contains(refusals, "cannot tell clawhost who is in a group") {
		t.Errorf("the command trail lacks the refusals:\n%s", refusals)
	}

	// clawhost sessions: the chat's session with the same command, from
	// the database of the running host and of the stopped one.
	for _, state := range []string{"running", "stopped"} {
		if state == "stopped" {
			h.stop()
		}
		cmd := Command(t, h.cfgPath)
		cmd.Args = []string{cmd.Path, "sessions", "-config", h.cfgPath} // its own flags follow it
		out, err := cmd.CombinedOutput()
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "agent:main:tg:direct:1001 ") {
				line = l
			}
		}
		if err != nil || !strings.Contains(line, "diverged") || !strings.Contains(line, "staging rollout") || !strings.HasSuffix(line, "cd "+ws+" && CLAUDE_CONFIG_DIR="+ownerDir+" claude --resume "+deployID) {
			t.Errorf("clawhost sessions, host %s: %v\n%s", state, err, out)
		}
	}
}
