package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A host killed with -9 leaves its claudes' TMPDIRs under <state>/t. The next run must not
// hand one of them to a new claude — the names repeat with the host's pid (a container's
// host is pid 1 at every start) — and RemoveLeftovers removes them, not the run's own.
func TestTMPDIRsAnEarlierRunLeft(t *testing.T) {
	state := t.TempDir()
	tdir := filepath.Join(state, "t")
	old := time.Now().Add(-time.Hour)
	plant := func(name string) string {
		d := filepath.Join(tdir, name)
		must(t, os.MkdirAll(d, 0o700))
		must(t, os.WriteFile(filepath.Join(d, "system-prompt.md"), []byte("chat A's prompt"), 0o600))
		must(t, os.Chtimes(d, old, old))
		return d
	}
	// The names this process would use first, and another run's.
	mine := plant(strconv.Itoa(os.Getpid()) + "-1")
	other := plant("1-1")

	r, err := New(Config{Command: "true", Workspace: t.TempDir(), StateDir: state}, nil)
	must(t, err)
	tmp, serr := r.newTmpdir(&r.cfg)
	if serr != nil {
		t.Fatal(serr)
	}
	if tmp == mine {
		t.Fatalf("a new claude's TMPDIR is %s, which an earlier run left", tmp)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("a new claude's TMPDIR %s holds %d files of an earlier run", tmp, len(entries))
	}
	select {
	case <-r.RemoveLeftovers():
	case <-time.After(10 * time.Second):
		t.Fatal("RemoveLeftovers did not end")
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("the run's own TMPDIR went: %v", err)
	}
}
