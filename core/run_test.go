package core

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
)

// TestStopWhileStartingIsClean: a SIGTERM that lands while the journal is
// being recovered (the supervisor stops a host that has just started) is
// a clean stop — Run returns nil, so the process exits 0 — and what was
// not recovered stays in the journal. It failed CI once as
// "journal recovery: context canceled", exit 1.
func TestStopWhileStartingIsClean(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	hcl := `data_dir = "` + filepath.Join(dir, "data") + `"
agent {
  command = "/bin/true"
  workspace = "` + filepath.Join(dir, "ws") + `"
  sandbox = "off"
}
admin {
  listen = ""
}
`
	if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var log bytes.Buffer
	h, err := New(cfg, Options{LogOutput: &log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal arrived before recovery finished
	if err := h.Run(ctx); err != nil {
		t.Fatalf("Run after a stop while starting = %v, want nil (a clean stop)\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "stopped while starting") {
		t.Errorf("no log line saying the host stopped while starting:\n%s", log.String())
	}
}
