package queuemode

import (
	"slices"
	"testing"
)

// TestNames: Names are All's, in its order, and none is empty or twice.
func TestNames(t *testing.T) {
	got := Names()
	if len(got) != len(All) {
		t.Fatalf("%d names for %d modes", len(got), len(All))
	}
	for i, n := range got {
		if n == "" || n != string(All[i]) || slices.Index(got, n) != i {
			t.Errorf("name %d %q, mode %q", i, n, All[i])
		}
	}
}
