package golden

import (
	"path/filepath"
	"testing"
)

// fakeT records what Check reports instead of failing the test.
type fakeT struct {
	testing.TB
	failed, fatal bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.fatal = true; panic(f) }
func (f *fakeT) Fatal(...any)          { f.fatal = true; panic(f) }

// TestCheck: equal output passes, different output fails, a missing file
// is fatal; with -update the file is written and then passes.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.golden")
	run := func(got string) (f *fakeT) {
		f = &fakeT{}
		defer func() { _ = recover() }()
		Check(f, path, []byte(got))
		return f
	}
	if f := run("x"); !f.fatal {
		t.Error("a missing golden file did not fail")
	}
	*update = true
	run("hello\n")
	*update = false
	if f := run("hello\n"); f.failed || f.fatal {
		t.Error("the written output does not match its golden file")
	}
	if f := run("other\n"); !f.failed {
		t.Error("different output passed")
	}
}
