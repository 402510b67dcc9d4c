package core

import (
	"errors"
	"os"
	"os/exec"
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

// TestDoctorSandbox: doctor probes bubblewrap as the runner does and says
// whether the host would start: ok with a working one; without one, a
// warning when only owners can reach the agent, a failure (with the
// command that installs it) when others can; sandbox = "off" warns.
func TestDoctorSandbox(t *testing.T) {
	ownersOnly := `access { dm_policy = "allowlist" }
plugin "web" { source = "webchat" }`
	strangers := `access { dm_policy = "open" }
plugin "tg" {
  source = "telegram"
  config { token = "123:abc" }
}`
	off := `agent { sandbox = "off" }` + "\n" + strangers
	t.Setenv("PATH", t.TempDir()) // no bwrap
	for _, tc := range []struct{ name, src, verdict, found, do string }{
		{"owners only", ownersOnly, VerdictWarn, "only owners can reach the agent, so the host starts", "install bubblewrap: "},
		{"strangers", strangers, VerdictFail, "the host refuses to start", `or write sandbox = "off"`},
		{"off", off, VerdictWarn, `agent.sandbox = "off"`, "bubblewrap"},
	} {
		got := doctorSandbox(loadSrc(t, tc.src))
		if len(got) != 1 || got[0].Verdict != tc.verdict || !strings.Contains(got[0].Found, tc.found) || !strings.Contains(got[0].Do, tc.do) {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
	if real, err := exec.LookPath("/usr/bin/bwrap"); err == nil {
		t.Setenv("PATH", filepath.Dir(real))
		if got := doctorSandbox(loadSrc(t, strangers)); len(got) != 1 || got[0].Verdict != VerdictOK {
			t.Errorf("with bubblewrap: %+v", got)
		}
	}
}

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
