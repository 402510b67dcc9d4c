package tail

import (
	"strings"
	"testing"
)

// TestBuffer keeps the last Max bytes, across writes that cross the limit.
func TestBuffer(t *testing.T) {
	b := &Buffer{Max: 8}
	for _, w := range []string{"abc", "defgh", "ijklmnop", "q"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := b.String(); got != "jklmnopq" {
		t.Errorf("kept %q, want the last 8 bytes %q", got, "jklmnopq")
	}
	big := strings.Repeat("x", 20) + "END"
	_, _ = b.Write([]byte(big))
	if got := b.String(); got != "xxxxxEND" {
		t.Errorf("kept %q after a write longer than Max", got)
	}
}
