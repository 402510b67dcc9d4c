package agenttools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// mcpInit opens an MCP session as claude does.
var mcpInit = []string{
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
}

// runBridge runs ServeMCP with env, writes the requests to its stdin and
// keeps stdin open until it has answered every request with an id (the
// SDK answers concurrently: a client that closes stdin at once loses
// answers, which claude never does); it returns the answers by id.
func runBridge(t *testing.T, env map[string]string, requests []string) map[string]map[string]any {
	t.Helper()
	want := 0
	for _, r := range requests {
		if strings.Contains(r, `"id":`) {
			want++
		}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := ServeMCP("test", func(k string) string { return env[k] }, inR, outW, &errOut)
		_ = outW.Close()
		done <- code
	}()
	go func() {
		for _, r := range requests {
			if _, err := io.WriteString(inW, r+"\n"); err != nil {
				return
			}
		}
	}()
	got := map[string]map[string]any{}
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for len(got) < want && sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		id, _ := json.Marshal(r["id"])
		got[string(id)] = r
	}
	_ = inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the bridge did not end after stdin closed")
	}
	if len(got) != want {
		t.Fatalf("%d answers, want %d: %v (%s)", len(got), want, got, errOut.String())
	}
	return got
}

// The MCP server answers initialize, lists schedule_message and refuses a
// call without a time, over newline-delimited JSON-RPC; a notification
// gets no answer, an unknown method an error.
func TestMCPScheduleProtocol(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CLAWHOST_AGENT_SOCKET": "/nonexistent/agent.sock", "CLAWHOST_AGENT_TOKEN": "t", "CLAWHOST_AGENT_CHAT": "tg:1"}
	resps := runBridge(t, env, append(mcpInit,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"schedule_message","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"nope"}`,
	))
	if v := resps["0"]["result"].(map[string]any)["protocolVersion"]; v != "2025-06-18" {
		t.Errorf("initialize: %v", resps["0"])
	}
	if b, _ := json.Marshal(resps["2"]); !strings.Contains(string(b), `"name":"schedule_message"`) {
		t.Errorf("tools/list: %s", b)
	}
	if b, _ := json.Marshal(resps["3"]); !strings.Contains(string(b), `"isError":true`) || !strings.Contains(string(b), "Give `in` or `at`") {
		t.Errorf("call without a time: %s", b)
	}
	if resps["4"]["error"] == nil {
		t.Errorf("unknown method: %v", resps["4"])
	}
}

// Without the environment the bridge refuses to start.
func TestMCPScheduleNeedsItsEnvironment(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := ServeMCP("test", func(string) string { return "" }, strings.NewReader(""), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "CLAWHOST_AGENT_TOKEN") {
		t.Errorf("exit %d, %q; want 2 naming the environment", code, errOut.String())
	}
}
