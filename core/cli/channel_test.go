package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/attach"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestChannelHandshakeAsClaude: Claude Code 2.1.330 opens with
// server/discover (MCP 2026-07-28) and skips a channel on that revision
// ("connection negotiated a modern protocol revision with no unsolicited
// notification path"); clawhost channel refuses server/discover, so claude
// initializes, and answers initialize with 2025-11-25 and the channel
// capabilities.
func TestChannelHandshakeAsClaude(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	b := &bridge{url: "ws://127.0.0.1:9" + attach.Path, chat: "tg:1", http: &http.Client{}, log: &sdktest.Log{}, calls: map[int64]chan attach.Frame{}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.serve(ctx, inR, outW) }()
	lines := bufio.NewReader(outR)
	call := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		s, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return m
	}
	d := call(`{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if e, _ := d["error"].(map[string]any); e == nil || e["code"] != float64(-32601) {
		t.Fatalf("server/discover: %v", d)
	}
	r := call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.330"}}}`)
	res, _ := r["result"].(map[string]any)
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	if res["protocolVersion"] != "2025-11-25" || exp["claude/channel"] == nil || exp["claude/channel/permission"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	_ = inW.Close()
	select {
	case err := <-done:
		if err != nil && !strings.Contains(err.Error(), "EOF") {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("clawhost channel did not end with its stdin")
	}
}
