// Package asnobody runs a package's sandbox tests again as the user nobody:
// a host not run as root gets recycled sandboxes too, and the tests that
// prove them hold must pass there, not skip. core/sandbox reruns the
// helper's own tests this way and core/runner the pool as it drives it.
// Only tests import it.
package asnobody

import (
	"os"
	"testing"

	"github.com/clawhost/clawhost/core/internal/runas"
)

// Nobody is the user nobody, for a test that needs root to do what it says
// as another user; it skips the test otherwise.
func Nobody(t *testing.T, what string) *runas.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to " + what)
	}
	u, err := runas.Lookup("nobody")
	if err != nil {
		t.Skip(err)
	}
	return u
}
