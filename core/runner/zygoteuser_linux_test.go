package runner

import (
	"testing"

	"github.com/clawhost/clawhost/core/internal/asnobody"
)

// TestZygoteUnprivileged: a host not run as root gets recycled sandboxes too. The runner's
// tests of them — the pool, the next chat after an eviction, Close waiting for the
// sandboxes, an idle runner holding no helper — run again as nobody (core/sandbox's
// TestZygoteUnprivileged does the same for the helper's own tests).
func TestZygoteUnprivileged(t *testing.T) {
	if asnobody.InRerun() {
		t.Skip("this is the run as another user")
	}
	needBwrap(t)
	u := asnobody.Nobody(t, "run the sandbox helper's tests as nobody")
	asnobody.Rerun(t, u, "^TestZygote", []string{"TestZygotePool", "TestZygoteNextChatAfterEviction", "TestZygoteCloseWaitsForTheSandboxes", "TestZygoteIdleHostHoldsNoHelper"})
}
