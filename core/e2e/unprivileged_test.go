package e2e

// The sandbox's boundary with the host run as an unprivileged user: the
// real binary as user nobody, the real claude CLI and the fake Anthropic
// API. CI runs as root, and every other test's host with it; these run the
// same walks (TestSandboxManifest's, TestBoundaryNextChat's) with the host
// dropped to nobody, where bubblewrap has no root to lean on.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// sandboxMode is the sandbox the host says its claudes run in, as
// `clawhost status` prints it: "bubblewrap (recycled)", "bubblewrap (per
// start: why)", "bubblewrap", … The host must run with clOptions.status.
func (h *clHost) sandboxMode() string {
	h.t.Helper()
	return statusSandbox(h.t, h.cfgPath)
}

// statusSandbox is the sandbox `clawhost status` names for the host
// configured at cfgPath, which has an admin endpoint; the endpoint comes up
// after the host's plugins, so this waits for it.
func statusSandbox(t testing.TB, cfgPath string) string {
	t.Helper()
	var mode string
	sdktest.WaitFor(t, "clawhost status to name the sandbox", func() error {
		var out, errb bytes.Buffer
		rc := run([]string{"status", "-config", cfgPath}, &out, &errb)
		for _, line := range strings.Split(out.String(), "\n") {
			if m, ok := strings.CutPrefix(line, "sandbox: "); ok {
				// In the host's first moments the sandbox helper may still be
				// starting (runner's zygoteStarting): what the host picked comes after.
				if mode = m; strings.Contains(m, "helper is starting") {
					return fmt.Errorf("sandbox: %s", m)
				}
				return nil
			}
		}
		return fmt.Errorf("exit %d:\n%s%s", rc, out.String(), errb.String())
	})
	return mode
}

// recycledMode reports whether a sandboxMode is the recycled sandboxes'.
func recycledMode(mode string) bool { return strings.Contains(mode, "(recycled)") }

// TestSandboxManifestUnprivileged is TestSandboxManifest's walk with the
// host run as nobody, with a bubblewrap per start and with the sandbox the
// host picks; beyond the root walk, the tool's shell and claude must hold
// no capability in any set and run with NoNewPrivs.
func TestSandboxManifestUnprivileged(t *testing.T) {
	t.Parallel()
	for _, run := range []struct {
		name string
		run  sandboxRun
	}{{"bwrap per start", sandboxRun{user: "nobody", helper: "0"}}, {"host's choice", sandboxRun{user: "nobody"}}} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			testSandboxManifest(t, run.run)
		})
	}
}

// TestBoundaryNextChatUnprivileged is TestBoundaryNextChat's attack (a file,
// a process and a shared memory segment chat A leaves, which chat B must
// not meet) with the host run as nobody, with a bubblewrap per start and
// with the sandbox the host picks.
func TestBoundaryNextChatUnprivileged(t *testing.T) {
	t.Parallel()
	t.Run("bwrap per start", func(t *testing.T) { testBoundaryNextChat(t, sandboxRun{user: "nobody", helper: "0"}) })
	t.Run("host's choice", func(t *testing.T) { testBoundaryNextChat(t, sandboxRun{user: "nobody"}) })
}
