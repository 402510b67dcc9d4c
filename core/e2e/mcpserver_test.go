package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestAgentMCPServer: through the real binary, the real claude CLI and a tiny
// stdio MCP server (testdata/mcpecho, built here into the agent's workspace,
// which its sandbox grants): the default agent's mcp_server "echo" is in its
// claude's tool list (a deferred tool, named in the request) beside clawhost's
// own tools, a call reaches the server
// with the env the block gave it (the token itself in no reply and no log),
// and agent "ops" is not offered it.
func TestAgentMCPServer(t *testing.T) {
	t.Parallel()
	rig, ws, server := newMCPEchoRig(t)
	fake, srv, dir := rig.fake, rig.srv, rig.dir
	const token = "tok-e2e-5ecret-7781"
	d := rig.start(t, Host{
		Agent: func() Agent {
			a := rig.agent(Attrs{"workspace": ws, "timeout": "60s",
				"allowed_tools": []string{"mcp__echo__token_hash"}})
			a.Raw = fmt.Sprintf("mcp_server \"echo\" {\n  command = %q\n  env = { ECHO_TOKEN = %q }\n}\n", server, token)
			return a
		}(),
		Agents:   []Agent{{ID: "ops", Attrs: Attrs{"chats": []string{"tg:1002"}, "workspace": filepath.Join(dir, "ops")}}},
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1002"}},
		Messages: Attrs{"streaming": "off"},
	})

	fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__echo__token_hash", Input: map[string]any{}}},
		anthropictest.Reply{Text: "Hashed."})
	srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "hash the token")
	tgWaitMessage(t, srv, tgAlice, "Hashed.")
	first := string(apiRequest(t, fake, 1).Body)
	if !strings.Contains(first, "mcp__echo__token_hash") || !strings.Contains(first, "mcp__clawhost__schedule_message") {
		t.Error("the default agent's claude was not offered both its own MCP server's tool and clawhost's")
	}
	sum := sha256.Sum256([]byte(token))
	if res := apiRequest(t, fake, 2).LastUserText(); !strings.Contains(res, "hash="+hex.EncodeToString(sum[:8])+" cwd="+ws) {
		t.Errorf("the MCP server's answer %q: not the env the block gave it, or not in the workspace", res)
	}

	srv.PushText(telegramtest.PrivateChat(1002), tgUser(1002, "Bob"), "and here?")
	tgWaitMessage(t, srv, 1002, "and here?")
	if body := string(apiRequest(t, fake, 3).Body); strings.Contains(body, "mcp__echo__") || !strings.Contains(body, "mcp__clawhost__schedule_message") {
		t.Error("agent ops's claude was offered the default agent's MCP server, or not clawhost's own tools")
	}
	if strings.Contains(d.Log(), token) {
		t.Error("the MCP server's env value is in the host's log")
	}
	if b, err := os.ReadFile(d.ConfigPath()); err != nil || !strings.Contains(string(b), "mcp_server \"echo\"") {
		t.Fatalf("the config lacks the block: %v", err)
	}
}

// TestWorkspaceMCPApproval: the workspace's .mcp.json starts nothing until
// `clawhost mcp-approve` (the real binary) records it; then a new claude of
// the agent offers its server's tool; once the file changes, the next new
// claude leaves it out again (a changed file needs a new approval).
func TestWorkspaceMCPApproval(t *testing.T) {
	t.Parallel()
	rig, ws, server := newMCPEchoRig(t)
	fake, srv := rig.fake, rig.srv
	mcpJSON := filepath.Join(ws, ".mcp.json")
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(mcpJSON, fmt.Appendf(nil, `{"mcpServers":{%q:{"command":%q}}}`, name, server), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("wsecho")
	d := rig.start(t, Host{
		Agent:    rig.agent(Attrs{"workspace": ws, "timeout": "60s"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1002", "tg:1003"}},
		Messages: Attrs{"streaming": "off"},
	})
	// ask sends text from a chat of its own (a new claude process) and
	// returns the request that carried it.
	ask := func(chat int64, text string) string {
		t.Helper()
		srv.PushText(telegramtest.PrivateChat(chat), tgUser(chat, "U"), text)
		tgWaitMessage(t, srv, chat, text)
		for _, r := range fake.Requests() {
			if strings.Contains(r.LastUserText(), text) {
				return string(r.Body)
			}
		}
		t.Fatalf("no request carried %q", text)
		return ""
	}
	if strings.Contains(ask(tgAlice, "before-approval"), "mcp__wsecho__") {
		t.Fatal("the workspace's .mcp.json was loaded without an approval")
	}
	out := teamCLI(t, d.ConfigPath(), "mcp-approve")
	if !strings.Contains(string(out), "Approved "+mcpJSON+" for agent main") {
		t.Fatalf("mcp-approve said %q", out)
	}
	if !strings.Contains(ask(1002, "after-approval"), "mcp__wsecho__token_hash") {
		t.Fatal("the approved .mcp.json's server is not offered")
	}
	write("changed")
	if body := ask(1003, "after-change"); strings.Contains(body, "mcp__changed__") || strings.Contains(body, "mcp__wsecho__") {
		t.Fatal("a .mcp.json changed since its approval was loaded")
	}
	sdktest.WaitFor(t, "the log line for the changed file", func() bool { return strings.Contains(d.Log(), "changed since it was approved") })
}

// newMCPEchoRig is a Telegram rig with the real claude CLI whose agent's
// workspace (returned) holds the stdio MCP server testdata/mcpecho, built
// at tools/mcpecho (the server's path, returned).
func newMCPEchoRig(t *testing.T) (rig *tgClaude, ws, server string) {
	t.Helper()
	rig = newTgClaude(t)
	ws = filepath.Join(rig.dir, "workspace")
	server = filepath.Join(ws, "tools", "mcpecho")
	if out, err := exec.Command("go", "build", "-o", server, "./testdata/mcpecho").CombinedOutput(); err != nil {
		t.Fatalf("build the MCP server: %v\n%s", err, out)
	}
	return rig, ws, server
}
