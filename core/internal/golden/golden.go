// Package golden compares a test's output with a golden file under its
// package's testdata, and rewrites the file instead when the test runs
// with -update (a flag this package defines). It is used by tests only (a
// test harness: it imports testing).
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (and what else the package's tests generate)")

// Updating reports whether the test runs with -update, for a test that
// rewrites a generated file of its own.
func Updating() bool { return *update }

// Check compares got with the file at path (relative to the test's
// package) and fails t, showing got, when they differ or the file is
// missing. With -update it writes got to path first, making its directory.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the golden file: %v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update accepts it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
