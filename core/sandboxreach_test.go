package core

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/hashicorp/go-hclog"
)

// loadSrc loads src as a config file in a directory of its own.
func loadSrc(t *testing.T, src string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return cfg
}

const (
	noBwrap    = "unavailable (bubblewrap not installed)"
	bwrapFails = "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)"
)

// TestReloadRefusesStrangersUnsandboxed: a host that started without a
// sandbox (owners only) refuses a reload that would let strangers in, and
// keeps the running configuration.
func TestReloadRefusesStrangersUnsandboxed(t *testing.T) {
	t.Parallel()
	running := loadSrc(t, `access { dm_policy = "allowlist" }`)
	next := loadSrc(t, `access { dm_policy = "pairing" }
plugin "tg" {
  source = "telegram"
  config { token = "123:abc" }
}`)
	var log strings.Builder
	h := &Host{cfg: running, sandbox: noBwrap, log: hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: &log})}
	if err := h.Reload(next); !errors.Is(err, sandboxreach.ErrNoSandbox) {
		t.Fatalf("Reload: %v, want sandboxreach.ErrNoSandbox", err)
	}
	if r := h.lastReloaded(); r == nil || !r.Refused || !strings.Contains(r.Reason, "install bubblewrap") {
		t.Errorf("last reload %+v", r)
	}
	if h.cfg != running {
		t.Error("the running configuration was replaced")
	}
}
