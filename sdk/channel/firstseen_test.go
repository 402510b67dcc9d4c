package channel

import (
	"strconv"
	"testing"
)

// TestFirstSeen: a key is first once; a full set (4096 keys) starts
// again, so a key seen before counts as new once more.
func TestFirstSeen(t *testing.T) {
	var s FirstSeen
	for _, k := range []string{"a", "b"} {
		if !s.First(k) || s.First(k) {
			t.Fatalf("%s: not first exactly once", k)
		}
	}
	for i := 2; i < firstSeenMax; i++ {
		s.First(strconv.Itoa(i))
	}
	if s.First("a") {
		t.Error("a key was forgotten before the set was full")
	}
	if !s.First("new") || !s.First("a") {
		t.Error("a full set did not start again")
	}
}
