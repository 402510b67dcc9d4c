package gateway

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/schema"
)

// TestCapabilitiesAndHookFieldsCrossTheProcesses runs the capabilities and
// the hook request through real plugin processes: the loopback channel
// declares no markdown, a 4-line limit and a display name; the clock hook
// lists the turn details it received (fake claude echoes its prompt, so
// they come back in the reply).
func TestCapabilitiesAndHookFieldsCrossTheProcesses(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, envOptions{
		loopback: map[string]any{"markdown": "none", "max_lines": 4, "display_name": "Loop Chat"},
		settings: func(s *Settings) { s.Turn.HookOrder = []string{"clock"}; s.Turn.Streaming = turn.StreamOff },
		extra: []pluginhost.Spec{{Instance: "clock", Source: "clock-hook", Path: filepath.Join(filepath.Dir(loopbackBin), "clawhost-clock-hook"),
			DataDir: filepath.Join(dir, "clock"), Fingerprint: "clock",
			Decode: func(schema.Schema) ([]byte, error) { return []byte(`{"timezone":"UTC","turn_details":true}`), nil }}},
	})
	e.post(in{"chat_id": "chat-u1", "sender_id": "u1", "sender_name": "User u1", "text": "**look** at `this`",
		"media": []map[string]any{{"kind": "image", "ref": "data:PNGDATA", "mime": "image/png", "filename": "cat.png"}}})
	first := e.next("chat-u1")
	msgs := []record{first}
	for {
		recs := e.records(1500 * time.Millisecond)
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			if r.Op == "send" && r.ChatID == "chat-u1" {
				msgs = append(msgs, r)
			}
		}
	}
	var texts []string
	for i, m := range msgs {
		if n := strings.Count(m.Text, "\n") + 1; n > 4 || m.Format != "plain" {
			t.Errorf("message %d (%d lines, format %s): %q", i, n, m.Format, m.Text)
		}
		texts = append(texts, m.Text)
	}
	all := strings.Join(texts, "\n")
	ws := e.set.Turn.Workspace
	contains(t, all, "[Loop Chat User u1", "look at this", "Workspace: "+ws, "Attachments: 1",
		"- image "+filepath.Join(ws, "media", "lo_direct_u1")+"/", `(image/png, "cat.png", 7 bytes)`)
	if strings.Contains(all, "**look**") || strings.Contains(all, "`this`") {
		t.Errorf("markdown reached a channel that declares none: %q", all)
	}
	m := regexp.MustCompile(`Session: ([0-9a-f-]{36}) \(new\)`).FindStringSubmatch(all)
	s, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	if m == nil || m[1] != s.ClaudeSessionID {
		t.Errorf("the hook's session id %v is not the session's claude id %q", m, s.ClaudeSessionID)
	}
}
