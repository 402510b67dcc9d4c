package e2e

import (
	"os"
	"strconv"
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
	pids := hostHelpers(h)
	if len(pids) == 0 {
		t.Fatal("no sandbox helper beside the warm claude: the first turn did not start one (and the check above could not fail)")
	}
	// What an idle host no longer holds: the helpers' processes and resident memory.
	var kb int
	for _, p := range pids {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				kb += n
			}
		}
	}
	t.Logf("after the first turn: %d sandbox helper processes (bubblewraps and helpers), %d kB resident; none before it", len(pids), kb)
}

// hostHelpers are the host's descendants that run the sandbox helper (its bubblewrap and
// the helper, whose argv names helper.Arg).
func hostHelpers(h *clHost) []int {
	var out []int
	for _, p := range descendants(h.cmd.Process.Pid, 3) {
		if alive(p) && strings.Contains(strings.Join(clCmdline(p), " "), "__sandbox-helper") {
			out = append(out, p)
		}
	}
	return out
}
