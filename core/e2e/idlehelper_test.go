package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// TestSandboxIdleHostHoldsNoHelper (issue 84, the idle host): a host whose claudes start
// in recycled sandboxes, started and idle, runs no sandbox helper (its probe start, which
// the status page's answer rests on, ran and was stopped); the first turn starts one, in
// which claude answers — through the real binary and the real CLI.
func TestSandboxIdleHostHoldsNoHelper(t *testing.T) {
	t.Parallel()
	lpNeedBwrap(t)
	h, mode := sandboxRun{}.startHost(t, clOptions{})
	if !recycledMode(mode) {
		if os.Getenv(helperEnv) != "" || os.Geteuid() != 0 {
			t.Skipf("the host picked %q: no recycled sandboxes in this run", mode)
		}
		t.Fatalf("clawhost as root picked %q, not recycled sandboxes", mode)
	}
	// The status says recycled once the helper's probe start passed and was stopped.
	if pids := hostHelpers(h); len(pids) != 0 {
		t.Fatalf("an idle host runs sandbox helpers: %v", pids)
	}
	h.fake.Enqueue(anthropictest.Reply{Text: "first answer"})
	from := h.mark()
	h.post("u1", "hello")
	rec, _ := h.waitSend("chat-u1", from, 90*time.Second)
	if !strings.Contains(rec.Text, "first answer") {
		t.Fatalf("the first turn answered %q", rec.Text)
	}
	if pids := hostHelpers(h); len(pids) == 0 {
		t.Fatal("no sandbox helper beside the warm claude: the first turn did not start one (and the check above could not fail)")
	}
}

// hostHelpers are the host's descendants that run the sandbox helper (its bubblewrap and
// the helper, whose argv names sandbox.ZygoteArg).
func hostHelpers(h *clHost) []int {
	var out []int
	for _, p := range descendants(h.cmd.Process.Pid, 3) {
		if alive(p) && strings.Contains(strings.Join(clCmdline(p), " "), "__sandbox-helper") {
			out = append(out, p)
		}
	}
	return out
}
