package slogh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// lines decodes the hclog JSON lines in buf.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestHandlerWritesHclogJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		log    func(l *slog.Logger)
		level  string
		msg    string
		fields map[string]any
	}{
		{"info with fields", func(l *slog.Logger) { l.Info("listening", "addr", "127.0.0.1:1", "port", 80) }, "info", "listening", map[string]any{"addr": "127.0.0.1:1", "port": float64(80)}},
		{"warn", func(l *slog.Logger) { l.Warn("slow") }, "warn", "slow", nil},
		{"error value", func(l *slog.Logger) { l.Error("failed", "error", errors.New("boom")) }, "error", "failed", map[string]any{"error": "boom"}},
		{"debug", func(l *slog.Logger) { l.Debug("detail") }, "debug", "detail", nil},
		{"trace", func(l *slog.Logger) { l.Log(context.Background(), LevelTrace, "wire") }, "trace", "wire", nil},
		{"duration as text", func(l *slog.Logger) { l.Info("retry", "after", 1500*time.Millisecond) }, "info", "retry", map[string]any{"after": "1.5s"}},
		{"groups are dotted", func(l *slog.Logger) {
			l.WithGroup("http").Info("done", "status", 200, slog.Group("req", "path", "/x"))
		}, "info", "done", map[string]any{"http.status": float64(200), "http.req.path": "/x"}},
		{"with attrs", func(l *slog.Logger) { l.With("chat", "c1").Info("sent") }, "info", "sent", map[string]any{"chat": "c1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			h := hclog.New(&hclog.LoggerOptions{Name: "p", Output: &buf, JSONFormat: true, Level: hclog.Trace})
			tc.log(New(h))
			got := lines(t, &buf)
			if len(got) != 1 {
				t.Fatalf("got %d lines, want 1: %s", len(got), buf.String())
			}
			m := got[0]
			if m["@level"] != tc.level || m["@message"] != tc.msg || m["@module"] != "p" {
				t.Errorf("got level %v message %v module %v, want %s %q p", m["@level"], m["@message"], m["@module"], tc.level, tc.msg)
			}
			if _, ok := m["@timestamp"]; !ok {
				t.Errorf("no @timestamp: %v", m)
			}
			for k, v := range tc.fields {
				if m[k] != v {
					t.Errorf("field %s = %#v, want %#v", k, m[k], v)
				}
			}
		})
	}
}

func TestHandlerHonoursLevel(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := New(hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Warn}))
	l.Info("dropped")
	l.Debug("dropped")
	l.Warn("kept")
	if got := lines(t, &buf); len(got) != 1 || got[0]["@message"] != "kept" {
		t.Errorf("got %v, want only the warning", got)
	}
	if l.Enabled(context.Background(), slog.LevelInfo) {
		t.Errorf("info enabled at hclog level warn")
	}
}
