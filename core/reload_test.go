package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config"
)

// TestReloadFromRefuses: a SIGHUP with a file that does not load keeps the
// running configuration and records the refusal, with the diagnostics at
// file:line, for the status page — the host's policy, not main's.
func TestReloadFromRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hcl")
	if err := os.WriteFile(good, []byte("data_dir = \"data\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	running, diags := config.Load(good)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		name, content, reason string
	}{
		{"missing", "", "missing.hcl"},
		{"syntax", "data_dir = \n", "syntax.hcl:1"},
		{"unknown attribute", "data_dri = \"data\"\n", "unknown attribute.hcl:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".hcl")
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var log strings.Builder
			h := &Host{cfg: running, log: hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: &log})}
			applied, warnings := h.ReloadFrom(path)
			if applied || warnings != "" {
				t.Errorf("ReloadFrom = %v, %q; want refused without warnings", applied, warnings)
			}
			r := h.lastReloaded()
			if r == nil || !r.Refused || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("last reload %+v: want refused with %q in the reason", r, tc.reason)
			}
			if h.cfg != running {
				t.Error("the running configuration was replaced")
			}
			if !strings.Contains(log.String(), "configuration refused; keeping the running set") {
				t.Errorf("log lacks the refusal:\n%s", log.String())
			}
		})
	}
}
