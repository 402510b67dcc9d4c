package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config/configtest"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/hashicorp/go-hclog"
)

const (
	noBwrap    = "unavailable (bubblewrap not installed)"
	bwrapFails = "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)"
)

// TestReloadRefusesStrangersUnsandboxed: a host that started without a
// sandbox (owners only) refuses a reload that would let strangers in, and
// keeps the running configuration.
func TestReloadRefusesStrangersUnsandboxed(t *testing.T) {
	t.Parallel()
	running := configtest.Load(t, `access { dm_policy = "allowlist" }`)
	next := configtest.Load(t, `access { dm_policy = "pairing" }
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
