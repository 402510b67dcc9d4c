package sandbox

import (
	"testing"

	"github.com/clawhost/clawhost/core/internal/asnobody"
)

// TestZygoteUnprivileged: a host not run as root gets recycled sandboxes too
// (zygoteBwrapUser, zygoteuser_linux.go). The helper's tests — each attack on it and the
// weakened helper each one beats, one claude at a time, a thousand starts, the shipped
// helper's capabilities — run again as nobody (core/runner's TestZygoteUnprivileged does
// the same for the pool as the runner drives it).
func TestZygoteUnprivileged(t *testing.T) {
	if asnobody.InRerun() {
		t.Skip("this is the run as another user")
	}
	needBwrap(t)
	u := asnobody.Nobody(t, "run the sandbox helper's tests as nobody")
	asnobody.Rerun(t, u, "^TestZygote", []string{"TestZygoteBoundary", "TestZygoteOneClaudeAtATime", "TestZygoteManyStarts", "TestZygoteRealHelperCaps"})
}
