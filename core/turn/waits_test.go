package turn

import (
	"strconv"
	"testing"

	"github.com/clawhost/clawhost/core/runner"
)

// TestWaitsAreBounded: how the last turns got to claude is kept for the
// most recent sessions only, the latest one always.
func TestWaitsAreBounded(t *testing.T) {
	var tu Turns
	for i := range maxWaits + 50 {
		tu.noteWait(strconv.Itoa(i), runner.Wait{Start: runner.StartWarm, Running: i})
	}
	if n := len(tu.waits); n > maxWaits {
		t.Fatalf("%d kept, bound %d", n, maxWaits)
	}
	last := strconv.Itoa(maxWaits + 49)
	if w := tu.LastWait(last); w.Start != runner.StartWarm || w.Running != maxWaits+49 {
		t.Fatalf("latest session's wait %+v", w)
	}
	tu.noteWait(last, runner.Wait{Start: runner.StartWarm, Running: 1})
	if w := tu.LastWait(last); w.Running != 1 {
		t.Fatalf("not replaced: %+v", w)
	}
}
