package agenttools

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The MCP server answers initialize, lists schedule_message and refuses a
// call without a time, over newline-delimited JSON-RPC.
func TestMCPScheduleProtocol(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"schedule_message","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"nope"}`,
	}, "\n") + "\n"
	var out, errOut bytes.Buffer
	env := map[string]string{"CLAWHOST_AGENT_SOCKET": "/nonexistent/agent.sock", "CLAWHOST_AGENT_TOKEN": "t", "CLAWHOST_AGENT_CHAT": "tg:1"}
	getenv := func(k string) string { return env[k] }
	if code := ServeMCP("test", getenv, strings.NewReader(in), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var resps []map[string]any
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		resps = append(resps, r)
	}
	if len(resps) != 4 {
		t.Fatalf("%d responses (the notification gets none): %v", len(resps), resps)
	}
	if v := resps[0]["result"].(map[string]any)["protocolVersion"]; v != "2025-06-18" {
		t.Errorf("initialize: %v", resps[0])
	}
	if b, _ := json.Marshal(resps[1]); !strings.Contains(string(b), `"name":"schedule_message"`) {
		t.Errorf("tools/list: %s", b)
	}
	if b, _ := json.Marshal(resps[2]); !strings.Contains(string(b), `"isError":true`) || !strings.Contains(string(b), "Give `in` or `at`") {
		t.Errorf("call without a time: %s", b)
	}
	if resps[3]["error"] == nil {
		t.Errorf("unknown method: %v", resps[3])
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
