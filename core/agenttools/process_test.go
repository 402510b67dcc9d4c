package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// startAgentAPIWith starts the tool endpoint with turns taking send_file and react.
func startAgentAPIWith(t *testing.T, turns Turns) *Endpoint {
	t.Helper()
	a := New(Options{Logger: hclog.NewNullLogger(), Schedules: &added{}, Turns: turns})
	if err := a.Start(filepath.Join(t.TempDir(), "run", "agent")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return a
}

// processEnv is the env map of a process's MCP config file.
func processEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	var cfg struct {
		MCPServers map[string]struct {
			Args []string          `json:"args"`
			Env  map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("MCP config %s: %v %s", path, err, b)
	}
	return cfg.MCPServers["clawhost"].Env
}

// TestProcessTokenTrustBoundary (issue 84): the agent tools of a claude started before
// any chat (a spare) carry a token made for that process, not for a chat. Before a chat
// adopts the process, every call with it is refused, whatever chat it names; once bound
// it acts for exactly the adopting chat (a call naming another is refused); one
// process's token never acts for another process's chat, nor binds twice; the token of
// an ended process is refused and its file is gone.
func TestProcessTokenTrustBoundary(t *testing.T) {
	t.Parallel()
	files := &attached{}
	a := startAgentAPIWith(t, files)
	key := sessionkey.Key{Agent: "main", Chat: "tg:direct:42"}
	m42 := &message.Message{Instance: "tg", ChatID: "42", ChatType: channel.ChatDirect, From: "tg:7"}
	m43 := &message.Message{Instance: "tg", ChatID: "43", ChatType: channel.ChatDirect, From: "tg:8"}

	p1, h1, err := a.ProcessTools("main")
	if err != nil {
		t.Fatal(err)
	}
	p2, h2, err := a.ProcessTools("main")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p1) != a.dir || p1 == p2 || h1 == h2 {
		t.Fatalf("process configs %s %s (handles %q %q), want two files in %s", p1, p2, h1, h2, a.dir)
	}
	if fi, err := os.Stat(p1); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("process config %s: %v %v, want mode 0600", p1, fi, err)
	}
	env1, env2 := processEnv(t, p1), processEnv(t, p2)
	tok1, tok2 := env1[EnvAgentToken], env2[EnvAgentToken]
	if len(tok1) < 64 || tok1 == tok2 || env1[EnvAgentChat] != "" || env1[EnvAgentSocket] != a.sock || env1[EnvAgentID] != "main" {
		t.Fatalf("process config env %v: want a 32-byte token of its own, the socket, the agent and no chat", env1)
	}
	if strings.Contains(p1, tok1) {
		t.Fatal("the token is in the file's name")
	}

	client := unixClient(a.sock)
	post := func(route, token, chat string) int {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"token": token, "chat": chat, "agent": "main", "at": time.Now().Add(time.Hour),
			"text": "ping", "path": "f", "emoji": "👍"})
		resp, err := client.Post("http://clawhost"+route, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sched := a.schedules.(*added)

	// Before adoption: a spare never acts for anyone. (Its bridge lists its agent's
	// plugin tools when it starts: listing acts for nobody.)
	if code := post("/tools", tok1, ""); code != http.StatusOK {
		t.Errorf("/tools with an unbound process token: %d, want 200", code)
	}
	for _, route := range []string{"/schedule", "/send_file", "/react", "/call"} {
		for _, chat := range []string{"", "tg:42"} {
			if code := post(route, tok1, chat); code != http.StatusForbidden {
				t.Errorf("%s with an unbound process token naming chat %q: %d, want 403", route, chat, code)
			}
		}
	}
	if len(sched.entries) != 0 || len(files.calls) != 0 {
		t.Fatalf("an unbound process acted: %+v %q", sched.entries, files.calls)
	}

	// Adopted by chat 42: it acts there, and only there.
	if err := a.BindProcess(h1, key, m42); err != nil {
		t.Fatal(err)
	}
	if err := a.BindProcess(h2, sessionkey.Key{Agent: "main", Chat: "tg:direct:43"}, m43); err != nil {
		t.Fatal(err)
	}
	if err := a.BindProcess(h1, sessionkey.Key{Agent: "main", Chat: "tg:direct:43"}, m43); err == nil {
		t.Error("a bound process was bound again, to another chat")
	}
	if code := post("/schedule", tok1, ""); code != http.StatusOK {
		t.Fatalf("the adopted process's schedule: %d", code)
	}
	if code := post("/send_file", tok1, ""); code != http.StatusOK {
		t.Fatalf("the adopted process's send_file: %d", code)
	}
	for _, chat := range []string{"tg:43", "tg:44"} {
		if code := post("/schedule", tok1, chat); code != http.StatusForbidden {
			t.Errorf("chat 42's process naming %s: %d, want 403", chat, code)
		}
		if code := post("/send_file", tok1, chat); code != http.StatusForbidden {
			t.Errorf("chat 42's process sending to %s: %d, want 403", chat, code)
		}
	}
	if len(sched.entries) != 1 || sched.entries[0].Chat != "tg:42" || sched.entries[0].Sender != "tg:7" {
		t.Fatalf("scheduled %+v, want one entry in tg:42 from tg:7", sched.entries)
	}
	if strings.Join(files.calls, ";") != "tg|42||f|" {
		t.Fatalf("files %q, want one in tg:42", files.calls)
	}
	// A per-chat token is no process token: chat 42's own does not act as 43's process.
	if code := post("/schedule", a.token("tg:42", "", false, "main"), "tg:43"); code != http.StatusForbidden {
		t.Errorf("chat 42's token naming tg:43: %d", code)
	}

	// The process ended: its token is refused, its file gone; the other's still works.
	a.DropProcess(h1)
	if code := post("/schedule", tok1, ""); code != http.StatusForbidden {
		t.Errorf("an ended process's token: %d, want 403", code)
	}
	if _, err := os.Stat(p1); !os.IsNotExist(err) {
		t.Errorf("an ended process's config file: %v", err)
	}
	if err := a.BindProcess(h1, key, m42); err == nil {
		t.Error("an ended process was bound")
	}
	if code := post("/schedule", tok2, ""); code != http.StatusOK || sched.entries[len(sched.entries)-1].Chat != "tg:43" {
		t.Errorf("chat 43's process after 42's ended: %d %+v", code, sched.entries)
	}
}

// A process config's bridge reaches the host without a chat in its environment: the
// MCP server starts, and a call before the binding is the tool's error, after it lands.
func TestProcessBridge(t *testing.T) {
	t.Parallel()
	a := startAgentAPIWith(t, &attached{})
	path, h, err := a.ProcessTools("main")
	if err != nil {
		t.Fatal(err)
	}
	env := processEnv(t, path)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schedule_message","arguments":{"in":"1h","text":"x"}}}`
	answers := runBridge(t, env, append(mcpInit, call))
	if b, _ := json.Marshal(answers["1"]["result"]); !strings.Contains(string(b), `"isError":true`) {
		t.Fatalf("an unbound bridge's call: %s", b)
	}
	if err := a.BindProcess(h, sessionkey.Key{Agent: "main"}, &message.Message{Instance: "tg", ChatID: "42", ChatType: channel.ChatDirect}); err != nil {
		t.Fatal(err)
	}
	answers = runBridge(t, env, append(mcpInit, call))
	if b, _ := json.Marshal(answers["1"]["result"]); !strings.Contains(string(b), "Scheduled for") {
		t.Fatalf("a bound bridge's call: %s", b)
	}
	if e := a.schedules.(*added).entries; len(e) != 1 || e[0].Chat != "tg:42" {
		t.Fatalf("scheduled %+v", e)
	}
}
