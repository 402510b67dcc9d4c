package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// whoamiTool is claude's tool_use of the whoami-tool example's tool name
// on plugin instance "whoami".
func whoamiTool(name string, input map[string]any) anthropictest.Reply {
	return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__whoami__" + name, Input: input}}
}

// TestPluginToolThroughClaude: through the real binary, the real claude
// CLI and the whoami-tool example plugin: agent "helper" (Alice's chat),
// granted whoami.* and allowing both tools in its permission rules, calls
// whoami and the plugin sees Alice's chat, Alice and agent helper; its
// wait tool, asked to wait an hour, ends at the plugin's tool_timeout with
// a tool error saying so; the default agent (Bob's chat), granted nothing,
// is not offered the tool and its call never reaches the plugin; each call
// the plugin got is an audit row (plugin_tool, with the chat, the sender
// and the outcome). The memory plugin, granted to helper too, finds a
// passage of helper's memory/*.md (the workspace the host names) with
// its file and line.
func TestPluginToolThroughClaude(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	dir := rig.dir
	if err := os.MkdirAll(filepath.Join(dir, "helper", "memory"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "helper", "memory", "pets.md"), []byte("# Pets\n\nAlice's cat is called Miso.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "60s"}),
		Agents: []Agent{{ID: "helper", Attrs: Attrs{"chats": []string{"tg:1001"}, "workspace": filepath.Join(dir, "helper"),
			"tools":         []string{"whoami.*", "memory.search"},
			"allowed_tools": []string{"mcp__clawhost__whoami__whoami", "mcp__clawhost__whoami__wait", "mcp__clawhost__memory__search"}}}},
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1002"}},
		Messages: Attrs{"streaming": "off"},
		Plugins:  []Plugin{{Name: "whoami", Source: "whoami-tool", Attrs: Attrs{"tool_timeout": "2s"}}, {Name: "memory", Source: "memory"}},
	})
	alice, bob := tgUser(tgAlice, "Alice"), tgUser(1002, "Bob")

	// whoami: the plugin sees the chat, the sender and the agent.
	fake.Enqueue(whoamiTool("whoami", map[string]any{}), anthropictest.Reply{Text: "You are Alice."})
	srv.PushText(telegramtest.PrivateChat(tgAlice), alice, "who am I?")
	tgWaitMessage(t, srv, tgAlice, "You are Alice.")
	if !strings.Contains(string(apiRequest(t, fake, 1).Body), "mcp__clawhost__whoami__whoami") {
		t.Error("agent helper's claude was not offered the plugin's tool")
	}
	if res := apiRequest(t, fake, 2).LastUserText(); !strings.Contains(res, "chat tg:1001 (direct), sender 1001 (Alice), agent helper, workspace "+filepath.Join(dir, "helper")) {
		t.Errorf("whoami's result: %q", res)
	}

	// wait, for an hour: the plugin's tool_timeout (2s) stops it.
	fake.Enqueue(whoamiTool("wait", map[string]any{"seconds": 3600}), anthropictest.Reply{Text: "It took too long."})
	srv.PushText(telegramtest.PrivateChat(tgAlice), alice, "wait an hour")
	tgWaitMessage(t, srv, tgAlice, "It took too long.")
	if res := apiRequest(t, fake, 4).LastUserText(); !strings.Contains(res, "The tool whoami.wait did not answer within 2s and was stopped.") {
		t.Errorf("the hanging tool's result: %q", res)
	}

	// The default agent is granted nothing: not offered, and its call
	// reaches no plugin.
	fake.Enqueue(whoamiTool("whoami", map[string]any{}), anthropictest.Reply{Text: "No such tool here."})
	srv.PushText(telegramtest.PrivateChat(1002), bob, "who am I?")
	tgWaitMessage(t, srv, 1002, "No such tool here.")
	if strings.Contains(string(apiRequest(t, fake, 5).Body), "mcp__clawhost__whoami__whoami") {
		t.Error("the default agent's claude was offered a tool it is not granted")
	}
	if res := apiRequest(t, fake, 6).LastUserText(); strings.Contains(res, "chat tg:") || !strings.Contains(strings.ToLower(res), "no such tool") {
		t.Errorf("the ungranted call's result: %q", res)
	}

	// memory.search: a passage of helper's own memory files.
	fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__memory__search", Input: map[string]any{"query": "cats name"}}},
		anthropictest.Reply{Text: "Miso."})
	srv.PushText(telegramtest.PrivateChat(tgAlice), alice, "what is my cat called?")
	tgWaitMessage(t, srv, tgAlice, "Miso.")
	if res := apiRequest(t, fake, 8).LastUserText(); !strings.Contains(res, "memory/pets.md:1\n# Pets\nAlice's cat is called Miso.") {
		t.Errorf("memory.search's result: %q", res)
	}

	// The trail, read from the database once the host has stopped.
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	var trail []struct {
		Kind, Actor, Instance, Subject, Decision, Detail string
		ChatID                                           string `json:"chat_id"`
	}
	if err := json.Unmarshal(teamCLI(t, d.ConfigPath(), "audit", "-kind", "plugin_tool", "-json"), &trail); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range trail {
		if e.Kind != "plugin_tool" || e.Actor != "tg:1001" || e.Instance != "tg" || e.ChatID != "1001" || !strings.HasPrefix(e.Detail, "call ") {
			t.Errorf("audit row %+v", e)
		}
		got[e.Subject] = e.Decision
	}
	if len(trail) != 3 || got["whoami.whoami"] != "ok" || got["whoami.wait"] != "timeout" || got["memory.search"] != "ok" {
		t.Errorf("the audit trail's plugin_tool rows: %+v", trail)
	}
}

// TestPluginToolApprovedAlways: a granted plugin tool that no rule allows
// is asked about in the chat like any tool (approvals = "chat"), under its
// MCP name; "Always" stores the rule, and the next call of the tool runs
// without a question.
func TestPluginToolApprovedAlways(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "60s",
			"approvals": "chat", "tools": []string{"whoami.whoami"}}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}},
		Messages: Attrs{"streaming": "off"},
		Plugins:  []Plugin{{Name: "whoami", Source: "whoami-tool"}},
	})
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	const asked = "claude wants to use whoami.whoami (a tool of plugin whoami)"

	fake.Enqueue(whoamiTool("whoami", map[string]any{}), anthropictest.Reply{Text: "First answer."})
	srv.PushText(chat, alice, "who am I?")
	q := tgWaitMessage(t, srv, tgAlice, asked)
	pressed := false
	for _, row := range q.Keyboard {
		for _, b := range row {
			if strings.HasPrefix(b.Text, "Always allow") && !pressed {
				if _, err := srv.PressButton(chat, q.MessageID, b.Data, alice); err != nil {
					t.Fatal(err)
				}
				pressed = true
			}
		}
	}
	if !pressed {
		t.Fatalf("no Always button under the question: %+v", q.Keyboard)
	}
	tgWaitMessage(t, srv, tgAlice, "First answer.")
	if res := apiRequest(t, fake, 2).LastUserText(); !strings.Contains(res, "chat tg:1001 (direct), sender 1001 (Alice), agent main") {
		t.Errorf("the approved call's result: %q", res)
	}

	fake.Enqueue(whoamiTool("whoami", map[string]any{}), anthropictest.Reply{Text: "Second answer."})
	srv.PushText(chat, alice, "and again?")
	tgWaitMessage(t, srv, tgAlice, "Second answer.")
	if res := apiRequest(t, fake, 4).LastUserText(); !strings.Contains(res, "chat tg:1001 (direct)") {
		t.Errorf("the second call's result: %q", res)
	}
	// Questions, counted as sent (an answered one is edited to its outcome).
	questions := map[int]bool{}
	for _, m := range srv.Sent() {
		if m.ChatID == "1001" && strings.Contains(m.Visible, asked) {
			questions[m.MessageID] = true
		}
	}
	if len(questions) != 1 {
		t.Errorf("asked %d times, want once (Always)", len(questions))
	}
}

// TestKill9ToolSideEffectOnce: clawhost is SIGKILLed mid-turn after a
// plugin tool with a side effect (whoami's note: a line in notes.txt) ran
// and claude is waiting for the model's next answer; after the restart
// the journal runs the turn again, claude makes the same call, and the
// host answers it with the stored result: the line is written once, and
// the reply is delivered once.
func TestKill9ToolSideEffectOnce(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	dir := rig.dir
	ws := filepath.Join(dir, "workspace")
	d := rig.start(t, Host{
		Agent: rig.agent(Attrs{"workspace": ws, "timeout": "60s",
			"tools": []string{"whoami.note"}, "allowed_tools": []string{"mcp__clawhost__whoami__note"}}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Messages: Attrs{"streaming": "off"},
		Plugins:  []Plugin{{Name: "whoami", Source: "whoami-tool"}},
	})
	note := whoamiTool("note", map[string]any{"text": "buy milk"})
	// The model asks for the note, then takes its time over the answer:
	// the kill comes while claude waits for it.
	fake.Enqueue(note, anthropictest.Reply{Text: "never sent", HeaderDelay: 10 * time.Minute})
	srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "note: buy milk")
	if res := apiRequestStarted(t, fake, 2).LastUserText(); !strings.Contains(res, "noted: buy milk") {
		t.Fatalf("the tool's result before the kill: %q", res)
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()

	// The re-run: claude makes the same call, then answers.
	fake.Enqueue(note, anthropictest.Reply{Text: "Noted it once."})
	d.spawn()
	tgWaitMessage(t, srv, tgAlice, "Noted it once.")
	tgSettle(t, srv, 500*time.Millisecond)
	if n := tgCount(srv, tgAlice, "Noted it once."); n != 1 {
		t.Errorf("the reply was delivered %d times, want once", n)
	}
	if res := apiRequest(t, fake, 4).LastUserText(); !strings.Contains(res, "noted: buy milk") {
		t.Errorf("the re-run's tool result: %q", res)
	}
	b, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "buy milk\tturn-") {
		t.Errorf("notes.txt after the kill and the re-run:\n%s\nwant one line, with its idempotency key", b)
	}
}
