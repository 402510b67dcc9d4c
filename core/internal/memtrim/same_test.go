package memtrim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameAsTheSDKs: this package is a copy of the sdk's (internal there,
// so the host cannot import it); the code of the two, package comments
// aside, is the same, so a fix to one is made to both.
func TestSameAsTheSDKs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"memtrim.go", "drop_linux.go", "drop_other.go"} {
		ours, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile(filepath.Join("..", "..", "..", "sdk", "internal", "memtrim", name))
		if err != nil {
			t.Fatal(err)
		}
		if code(string(ours)) != code(string(theirs)) {
			t.Errorf("%s differs from sdk/internal/memtrim/%s: make the change in both", name, name)
		}
	}
}

// code is a file from its package clause on.
func code(s string) string {
	if i := strings.Index(s, "\npackage "); i >= 0 {
		return s[i:]
	}
	return s
}
