package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestPing(t *testing.T) {
	h := sdktest.Start(t, plugin())
	ctx := context.Background()
	specs, err := h.Plugin.ListCommands(ctx)
	if err != nil || len(specs) != 2 || specs[0].Name != "ping" || specs[1].Name != "report" {
		t.Fatalf("list: %v %v", specs, err)
	}
	for _, tc := range []struct{ args, want string }{{"", "pong"}, {"hi there", "pong hi there"}} {
		res, err := h.Plugin.Execute(ctx, command.Request{Command: "ping", Args: tc.args})
		if err != nil || len(res.Replies) != 1 || res.Replies[0].Text != tc.want {
			t.Errorf("execute %q: %+v %v, want %q", tc.args, res, err, tc.want)
		}
	}
}

func TestReport(t *testing.T) {
	data := t.TempDir()
	h := sdktest.Start(t, plugin()).Configure(t, schema.Config{Instance: "ping", JSON: []byte(`{}`), DataDir: data})
	ctx := context.Background()
	res, err := h.Plugin.Execute(ctx, command.Request{Command: "report"})
	if err != nil || len(res.Replies) != 2 {
		t.Fatalf("report: %+v %v", res, err)
	}
	if r := res.Replies[0]; r.Format != channel.FormatMarkdown || !strings.Contains(r.Text, "**10**") {
		t.Errorf("first reply %+v", r)
	}
	m := res.Replies[1].Media
	if len(m) != 1 {
		t.Fatalf("second reply's media %+v", m)
	}
	if b, err := os.ReadFile(m[0].Path); err != nil || !strings.Contains(string(b), "10 passed") {
		t.Errorf("the file %s: %q %v", m[0].Path, b, err)
	}
	if m[0].Path != filepath.Join(data, "report.txt") {
		t.Errorf("the report at %s, want it in the data directory %s", m[0].Path, data)
	}
}
