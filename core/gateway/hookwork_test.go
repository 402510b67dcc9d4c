package gateway

import (
	"slices"
	"strconv"
	"testing"
)

// hookWork keeps each session's last line per stage, message_received first, and
// forgets the oldest session beyond hookWorkKeys.
func TestHookWork(t *testing.T) {
	t.Parallel()
	var w hookWork
	w.set("k", "sending", "🔊 spoken in 0.8 s")
	w.set("k", "received", "🎙 transcribed in 1.4 s")
	w.set("k", "sending", "🔊 spoken in 0.5 s")
	if got := w.lines("k"); !slices.Equal(got, []string{"🎙 transcribed in 1.4 s", "🔊 spoken in 0.5 s"}) {
		t.Fatalf("lines %q", got)
	}
	for i := range hookWorkKeys {
		w.set("s"+strconv.Itoa(i), "received", "x")
	}
	if w.lines("k") != nil || len(w.m) != hookWorkKeys || w.lines("s0") == nil {
		t.Fatalf("kept %d sessions; k %q", len(w.m), w.lines("k"))
	}
}
