package agenttools

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/tool"
)

// fakeTools are tool plugins: "mem" offers search (it records the calls)
// and hang (which waits for its context), "git" offers status.
type fakeTools struct {
	mu    sync.Mutex
	calls []tool.CallRequest
}

var objectSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)

func (f *fakeTools) ListTools(_ context.Context, want func(string) bool) map[string][]tool.Spec {
	all := map[string][]tool.Spec{
		"mem": {{Name: "search", Description: "search memory", InputSchema: objectSchema}, {Name: "hang", Description: "never answers", InputSchema: objectSchema},
			{Name: "bad", Description: "a schema that is no object", InputSchema: json.RawMessage(`{"type":"string"}`)}},
		"git": {{Name: "status", Description: "git status", InputSchema: objectSchema}},
	}
	out := map[string][]tool.Spec{}
	for k, v := range all {
		if want(k) {
			out[k] = v
		}
	}
	return out
}

func (f *fakeTools) CallTool(ctx context.Context, instance string, req tool.CallRequest) (tool.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.mu.Unlock()
	if req.Tool == "hang" {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	return tool.Result{Text: instance + "." + req.Tool + " found " + string(req.Arguments)}, nil
}

// grants: agent main has mem.*, agent ops git.status; tools time out
// after 50ms (the hang tool shows it).
type grants struct{}

func (grants) Granted(agent string) []string {
	return map[string][]string{"main": {"mem.*"}, "ops": {"git.status"}}[agent]
}
func (grants) Workspace(agent string) string         { return "/ws/" + agent }
func (grants) Workdir(agent, key string) string      { return "/ws/" + agent + "/wt/" + key }
func (grants) Timeout(instance string) time.Duration { return 50 * time.Millisecond }

type auditLog struct {
	mu     sync.Mutex
	events []store.AuditEvent
}

func (l *auditLog) add(_ context.Context, e store.AuditEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// TestPluginToolsThroughTheBridge: the bridge of agent main's chat offers
// mem's tools (not git's, not the one with an object-less schema) as
// mem__<tool>; a call reaches the plugin with the chat, the sender, the
// agent, its workspace and a call id, and is audited; a call of a tool
// the agent is not granted is refused and audited, never routed; a
// hanging tool ends at the timeout with a tool error naming it.
func TestPluginToolsThroughTheBridge(t *testing.T) {
	t.Parallel()
	plugins, audit := &fakeTools{}, &auditLog{}
	a := New(Options{Logger: hclog.NewNullLogger(), Schedules: &added{}, PluginTools: plugins, Grants: grants{}, Audit: audit.add})
	if err := a.Start(t.TempDir() + "/agent"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	m := &message.Message{Instance: "tg", ChatID: "42", ChatType: channel.ChatDirect, From: "tg:7", Sender: channel.Sender{ID: "7", Name: "Alice"}}
	path, _ := a.Tools(sessionkey.Key{Agent: "main", Chat: "tg:direct:42"}, m)
	var cfg struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("MCP config: %v", err)
	}
	env := cfg.MCPServers["clawhost"].Env
	if env[EnvAgentID] != "main" {
		t.Fatalf("the bridge's environment names agent %q", env[EnvAgentID])
	}
	answers := runBridge(t, env, append(mcpInit,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mem__search","arguments":{"q":"cats"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mem__hang","arguments":{}}}`,
	))
	list, _ := json.Marshal(answers["1"])
	for _, want := range []string{`"name":"mem__search"`, `"name":"mem__hang"`, `"name":"schedule_message"`} {
		if !strings.Contains(string(list), want) {
			t.Errorf("tools/list lacks %s: %s", want, list)
		}
	}
	for _, not := range []string{"git__status", "mem__bad"} {
		if strings.Contains(string(list), not) {
			t.Errorf("tools/list offers %s: %s", not, list)
		}
	}
	if b, _ := json.Marshal(answers["2"]["result"]); !strings.Contains(string(b), `mem.search found {\"q\":\"cats\"}`) || strings.Contains(string(b), `"isError":true`) {
		t.Errorf("mem__search: %s", b)
	}
	if b, _ := json.Marshal(answers["3"]["result"]); !strings.Contains(string(b), "The tool mem.hang did not answer within 50ms and was stopped.") || !strings.Contains(string(b), `"isError":true`) {
		t.Errorf("mem__hang: %s", b)
	}
	plugins.mu.Lock()
	calls := append([]tool.CallRequest(nil), plugins.calls...)
	plugins.mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("%d calls reached the plugins, want 2: %+v", len(calls), calls)
	}
	for _, c := range calls {
		if c.Conversation.ChatID != "42" || c.Conversation.Instance != "tg" || c.Conversation.SessionKey != "agent:main:tg:direct:42" ||
			c.Sender.ID != "7" || c.Agent != "main" || c.Workspace != "/ws/main" || c.Workdir != "/ws/main/wt/agent:main:tg:direct:42" || len(c.CallID) < 16 {
			t.Errorf("call %+v", c)
		}
	}
	if calls[0].CallID == calls[1].CallID {
		t.Error("two calls share a call id")
	}

	// A tool of another agent's grant, called directly with this chat's
	// token (the bridge never lists it): refused, audited, not routed.
	var res pluginToolResult
	ep := agentEndpoint{socket: a.sock, token: env[EnvAgentToken], chat: "tg:42", agent: "main"}
	if err := ep.call(context.Background(), "/call", map[string]any{"tool": "git__status", "arguments": json.RawMessage(`{}`)}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "not granted") {
		t.Errorf("git__status for agent main: %+v", res)
	}
	// The token is the agent's: claiming agent ops with it is refused.
	ep.agent = "ops"
	if err := ep.call(context.Background(), "/call", map[string]any{"tool": "git__status", "arguments": json.RawMessage(`{}`)}, &res); err == nil || !strings.Contains(err.Error(), "not valid") {
		t.Errorf("main's token as agent ops: %v", err)
	}
	plugins.mu.Lock()
	n := len(plugins.calls)
	plugins.mu.Unlock()
	if n != 2 {
		t.Errorf("%d calls reached the plugins, want still 2", n)
	}
	audit.mu.Lock()
	defer audit.mu.Unlock()
	got := map[string]string{}
	for _, e := range audit.events {
		if e.Kind != store.AuditPluginTool || e.Actor != "tg:7" || e.Instance != "tg" || e.ChatID != "42" {
			t.Errorf("audit row %+v", e)
		}
		got[e.Subject] = e.Decision
	}
	if want := map[string]string{"mem.search": "ok", "mem.hang": "timeout", "git.status": "refused"}; len(got) != 3 || got["mem.search"] != "ok" || got["mem.hang"] != "timeout" || got["git.status"] != "refused" {
		t.Errorf("audit %v, want %v", got, want)
	}
}

// TestGrants: exact names, a plugin's wildcard and globs grant; other
// plugins' tools and prefixes do not.
func TestGrants(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		patterns       []string
		instance, tool string
		want           bool
	}{
		{[]string{"memory.*"}, "memory", "search", true},
		{[]string{"git.status"}, "git", "status", true},
		{[]string{"git.status"}, "git", "push", false},
		{[]string{"git.stat"}, "git", "status", false},
		{[]string{"memory.*"}, "memory2", "search", false},
		{[]string{"*.search"}, "notes", "search", true},
		{nil, "memory", "search", false},
	} {
		if got := Grants(c.patterns, c.instance, c.tool); got != c.want {
			t.Errorf("Grants(%q, %s, %s) = %v, want %v", c.patterns, c.instance, c.tool, got, c.want)
		}
	}
}

// memResults are store.ToolResults in memory, first result kept.
type memResults struct {
	mu sync.Mutex
	m  map[string]store.ToolResult
}

func (r *memResults) RecordToolResult(_ context.Context, res store.ToolResult) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]store.ToolResult{}
	}
	if _, ok := r.m[res.Key]; !ok {
		r.m[res.Key] = res
	}
	return nil
}

func (r *memResults) ToolResult(_ context.Context, key string) (store.ToolResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.m[key]
	if !ok {
		return store.ToolResult{}, store.ErrNotFound
	}
	return res, nil
}

// TestPluginToolOnceAcrossReruns: the calls of a turn's run carry an
// idempotency key of the turn, the tool, the arguments and the ordinal
// among the same calls; a run of the same turn again (after a crash)
// that makes the same calls, in another order, gets the stored results
// and reaches no plugin; a call with other arguments, another turn's
// call, and a run that is no turn's (journal 0, no key) reach it.
func TestPluginToolOnceAcrossReruns(t *testing.T) {
	t.Parallel()
	plugins, results := &fakeTools{}, &memResults{}
	a := New(Options{Logger: hclog.NewNullLogger(), Schedules: &added{}, PluginTools: plugins, Grants: grants{}, Results: results})
	if err := a.Start(t.TempDir() + "/agent"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	m := &message.Message{Instance: "tg", ChatID: "42", ChatType: channel.ChatDirect, From: "tg:7", Sender: channel.Sender{ID: "7", Name: "Alice"}}
	key := sessionkey.Key{Agent: "main", Chat: "tg:direct:42"}
	ep := agentEndpoint{socket: a.sock, token: a.token("tg:42", "", false, "main"), chat: "tg:42", agent: "main"}
	call := func(args string) pluginToolResult {
		t.Helper()
		var res pluginToolResult
		if err := ep.call(context.Background(), "/call", map[string]any{"tool": "mem__search", "arguments": json.RawMessage(args)}, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	reached := func() []string {
		plugins.mu.Lock()
		defer plugins.mu.Unlock()
		var keys []string
		for _, c := range plugins.calls {
			keys = append(keys, c.IdempotencyKey)
		}
		plugins.calls = nil
		return keys
	}

	a.ToolRun(key, m, 7)
	first := []pluginToolResult{call(`{"q":"cats"}`), call(`{"q": "cats"}`), call(`{"q":"dogs"}`)}
	keys := reached()
	if len(keys) != 3 || keys[0] == keys[1] || !strings.HasPrefix(keys[0], "turn-7:mem.search:") || !strings.HasSuffix(keys[0], ":1") || !strings.HasSuffix(keys[1], ":2") {
		t.Fatalf("the first run's keys %q: want three, turn-7:mem.search:…, the second identical call :2", keys)
	}

	// The turn runs again: the same calls, dogs first.
	a.ToolRun(key, m, 7)
	dogs, cats1, cats2 := call(`{"q":"dogs"}`), call(`{"q":"cats"}`), call(`{"q":"cats"}`)
	if got := reached(); len(got) != 0 {
		t.Errorf("the re-run's same calls reached the plugin: %q", got)
	}
	if dogs != first[2] || cats1 != first[0] || cats2 != first[1] {
		t.Errorf("the re-run's answers %+v %+v %+v, want the first run's %+v", dogs, cats1, cats2, first)
	}
	// A call the first run did not make: a third cats, and other arguments.
	call(`{"q":"cats"}`)
	call(`{"q":"birds"}`)
	if got := reached(); len(got) != 2 || !strings.HasSuffix(got[0], ":3") {
		t.Errorf("the re-run's new calls reached the plugin with %q, want two, the first :3", got)
	}

	// Another turn: its own keys.
	a.ToolRun(key, m, 8)
	call(`{"q":"cats"}`)
	if got := reached(); len(got) != 1 || !strings.HasPrefix(got[0], "turn-8:") {
		t.Errorf("turn 8's call reached the plugin with %q", got)
	}
	// A run that is no turn's: no key, nothing stored or replayed.
	a.ToolRun(key, m, 0)
	call(`{"q":"cats"}`)
	call(`{"q":"cats"}`)
	if got := reached(); len(got) != 2 || got[0] != "" || got[1] != "" {
		t.Errorf("the memory flush's calls reached the plugin with keys %q, want two without", got)
	}
}
