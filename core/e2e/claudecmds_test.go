package e2e

// claude's own commands and skills in the chat (issue 78, part 2): the
// project's .claude/commands and .claude/skills, and what the real CLI's
// init lists, are offered in the channels' command menus next to
// clawhost's own; "/name args" reaches claude as its command (the CLI
// expands it: the request to the fake API shows the command file's body);
// a name clawhost has a command of stays clawhost's and "/cc name" reaches
// claude's.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// writeClaudeCommands puts a project command greet, a project command
// status (a name clawhost's /status has) and a project skill haiku into ws.
func writeClaudeCommands(t *testing.T, ws string) {
	t.Helper()
	files := map[string]string{
		".claude/commands/greet.md":        "---\ndescription: Greet someone warmly\n---\nGREETBODY please greet $ARGUMENTS warmly\n",
		".claude/commands/status.md":       "---\ndescription: Project status report\n---\nSTATUSBODY report the project's status\n",
		".claude/skills/haiku/SKILL.md":    "---\nname: haiku\ndescription: Write a haiku\n---\nHAIKUBODY\n",
		".claude/commands/notes/inside.md": "namespaced\n",
	}
	for p, body := range files {
		full := filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// requestWith is the first request to the fake API whose last user
// message holds s.
func requestWith(fake *anthropictest.Server, s string) *anthropictest.Request {
	for _, r := range fake.Requests() {
		if strings.Contains(r.LastUserText(), s) {
			return r
		}
	}
	return nil
}

func menuHas(cmds []telegramtest.BotCommand, name, desc string) bool {
	return slices.ContainsFunc(cmds, func(c telegramtest.BotCommand) bool {
		return c.Command == name && (desc == "" || c.Description == desc)
	})
}

func TestClaudeCommandsTelegram(t *testing.T) {
	t.Parallel()
	fake, mod, ws := realClaudeIn(t)
	writeClaudeCommands(t, ws)
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	h := Host{
		Dir:     t.TempDir(),
		Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}},
		Admin:   Attrs{"listen": ""},
		Plugins: []Plugin{tgPlugin(srv.APIEndpoint())},
	}
	mod(&h)
	Launch(t, h.Write(t))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(srv))
		}
	})
	dm := telegramtest.PrivateChat(tgAlice)
	alice := tgUser(tgAlice, "Alice")

	// The menu at start: clawhost's own, /cc, the project's command and
	// skill from the workspace; status is clawhost's, with its own line.
	sdktest.WaitFor(t, "the project's commands in the Telegram menu", func() bool {
		m := srv.Commands()
		return menuHas(m, "greet", "Greet someone warmly (claude)") && menuHas(m, "haiku", "Write a haiku (claude)") && menuHas(m, "cc", "")
	})
	m := srv.Commands()
	if !menuHas(m, "status", "") || menuHas(m, "status", "Project status report (claude)") || menuHas(m, "clear", "") {
		t.Fatalf("menu %+v: status must be clawhost's, clear not offered", m)
	}

	// /greet runs as claude's command: the request shows its expansion,
	// not the line inside an envelope.
	srv.PushText(dm, alice, "/greet Bob and Ann")
	tgWaitMessage(t, srv, tgAlice, "GREETBODY please greet Bob and Ann warmly")
	r := requestWith(fake, "GREETBODY please greet Bob and Ann warmly")
	if r == nil || strings.Contains(r.LastUserText(), "[Telegram") || !strings.Contains(r.LastUserText(), "<command-name>/greet</command-name>") {
		t.Fatalf("the request does not show /greet's expansion: %+v", r)
	}

	// After that turn the CLI's init listed its own commands too:
	// code-review is offered as /code_review (Telegram allows no '-'),
	// and /code_review runs claude's code-review.
	sdktest.WaitFor(t, "claude's own commands from init in the menu", func() bool { return menuHas(srv.Commands(), "code_review", "") })
	if menuHas(srv.Commands(), "heapdump", "") || menuHas(srv.Commands(), "focus", "") {
		t.Fatalf("a terminal command is offered: %+v", srv.Commands())
	}

	// /status stays clawhost's; /cc status is the project's.
	srv.PushText(dm, alice, "/status")
	tgWaitMessage(t, srv, tgAlice, "Session")
	srv.PushText(dm, alice, "/cc status")
	tgWaitMessage(t, srv, tgAlice, "STATUSBODY report the project's status")
	if n := len(fake.Requests()); requestWith(fake, "STATUSBODY") == nil {
		t.Fatalf("/cc status did not reach claude's command (%d requests)", n)
	}

	// A command a chat may not run is refused with a reason; /cc alone
	// lists claude's commands.
	srv.PushText(dm, alice, "/cc clear")
	tgWaitMessage(t, srv, tgAlice, "claude's /clear cannot run from a chat")
	srv.PushText(dm, alice, "/cc")
	tgWaitMessage(t, srv, tgAlice, "claude's commands", "/greet — Greet someone warmly")
}

// TestClaudeCommandsDiscord: the project's commands become Discord
// application commands (claude's code-review keeps its '-'), and the slash
// command /greet, picked from the menu, runs claude's command.
func TestClaudeCommandsDiscord(t *testing.T) {
	t.Parallel()
	_, mod, ws := realClaudeIn(t)
	e := startDiscordDaemon(t, true, nil, mod, func(*Host) { writeClaudeCommands(t, ws) })
	e.live(t, 1)
	has := func(name, desc string) bool {
		return slices.ContainsFunc(e.srv.Commands(""), func(c discordtest.Command) bool {
			return c.Name == name && (desc == "" || c.Description == desc)
		})
	}
	sdktest.WaitFor(t, "the project's commands among the application commands", func() bool {
		return has("greet", "Greet someone warmly (claude)") && has("haiku", "") && has("cc", "") && has("status", "")
	})
	if has("status", "Project status report (claude)") {
		t.Fatalf("status is claude's in the menu: %+v", e.srv.Commands(""))
	}
	in := e.srv.PushCommand(e.dm[dcAlice.ID], dcAlice, "greet", "Carol")
	sdktest.WaitFor(t, "the slash command's answer", func() bool {
		for _, s := range e.srv.Sent() {
			if s.Interaction == in.ID && strings.Contains(s.Content, "GREETBODY please greet Carol warmly") {
				return true
			}
		}
		return false
	})
	sdktest.WaitFor(t, "claude's code-review from init", func() bool { return has("code-review", "") })
}

// TestClaudeCommandsSlack: on Slack claude's commands are subcommands of
// the app's slash command: "/claw greet Dan" runs the project's greet.
func TestClaudeCommandsSlack(t *testing.T) {
	t.Parallel()
	var ws string
	e := startSlackDaemon(t, func(h *Host) {
		ws = h.Agent.Attrs["workspace"].(string)
		writeClaudeCommands(t, ws)
	})
	e.srv.Slash(slAlice.ID, e.dm, "/claw", "greet Dan")
	e.waitMessage(t, e.dm, "", "GREETBODY please greet Dan warmly")
	if r := requestWith(e.fake, "GREETBODY please greet Dan warmly"); r == nil || strings.Contains(r.LastUserText(), "[Slack") {
		t.Fatalf("the request does not show /greet's expansion: %+v", r)
	}
	e.srv.Slash(slAlice.ID, e.dm, "/claw", "cc")
	e.waitMessage(t, e.dm, "", "claude's commands", "/greet — Greet someone warmly")
}

// TestClaudeCommandsPerChatTelegram: a chat bound to another agent is
// offered that agent's claude commands in its own menu (setMyCommands with
// BotCommandScopeChat), the other chats the default agent's; a chat that
// switches agents with /agent gets the agent's menu at once, and the
// default agent's again when it switches back.
func TestClaudeCommandsPerChatTelegram(t *testing.T) {
	t.Parallel()
	_, mod, ws := realClaudeIn(t)
	opsWS := filepath.Join(t.TempDir(), "ops")
	for dir, file := range map[string]string{
		ws:    ".claude/commands/greet.md",
		opsWS: ".claude/commands/deploy.md",
	} {
		full := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".md")
		if err := os.WriteFile(full, []byte("---\ndescription: the "+name+" command\n---\n"+strings.ToUpper(name)+"BODY $ARGUMENTS\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	h := Host{
		Dir:     t.TempDir(),
		Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1002"}, "owners": []string{"tg:1001"}},
		Admin:   Attrs{"listen": ""},
		Plugins: []Plugin{tgPlugin(srv.APIEndpoint())},
		Agents:  []Agent{{ID: "ops", Attrs: Attrs{"workspace": opsWS, "chats": []string{"tg:1002"}, "switchable": true}}},
	}
	mod(&h)
	Launch(t, h.Write(t))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(srv))
		}
	})
	sdktest.WaitFor(t, "the default menu with greet", func() bool { return menuHas(srv.Commands(), "greet", "the greet command (claude)") })
	sdktest.WaitFor(t, "the ops chat's menu with deploy", func() bool { return menuHas(srv.ChatCommands(1002), "deploy", "the deploy command (claude)") })
	if m := srv.Commands(); menuHas(m, "deploy", "") {
		t.Errorf("the default menu offers ops's deploy: %+v", m)
	}
	ops := srv.ChatCommands(1002)
	if menuHas(ops, "greet", "") || !menuHas(ops, "status", "") || !menuHas(ops, "agent", "") || !menuHas(ops, "cc", "") {
		t.Errorf("the ops chat's menu must hold clawhost's commands and deploy, not greet: %+v", ops)
	}
	if m := srv.ChatCommands(tgAlice); m != nil {
		t.Errorf("Alice's chat, bound to no agent, got a menu of its own: %+v", m)
	}

	// Alice switches to ops: her chat's menu is ops's; back: the default
	// agent's.
	dm, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	srv.PushText(dm, alice, "/agent ops")
	sdktest.WaitFor(t, "Alice's menu after /agent ops", func() bool { return menuHas(srv.ChatCommands(tgAlice), "deploy", "") })
	if m := srv.ChatCommands(tgAlice); menuHas(m, "greet", "") {
		t.Errorf("Alice's menu at ops offers greet: %+v", m)
	}
	srv.PushText(dm, alice, "/agent main")
	sdktest.WaitFor(t, "Alice's menu after /agent main", func() bool {
		m := srv.ChatCommands(tgAlice)
		return menuHas(m, "greet", "") && !menuHas(m, "deploy", "")
	})
}
