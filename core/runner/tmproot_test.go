package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"
)

// A host killed with -9 leaves its claudes' TMPDIRs under <state>/t. The next run must not
// hand one of them to a new claude — the names repeat with the host's pid (a container's
// host is pid 1 at every start) — and RemoveLeftovers removes them, not the run's own. It
// also removes what its spares left (core/internal/sparedir): a spare's directories, and
// the link an adopted one leaves, never the chat's files.
func TestTMPDIRsAnEarlierRunLeft(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
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
	spareMedia, spareState, adopted := filepath.Join(ws, "media", "+spare-aa"), filepath.Join(state, "spares", "aa"), filepath.Join(ws, "media", "+spare-bb")
	chatFile := filepath.Join(ws, "media", "tg_direct_1", "photo.jpg")
	for _, d := range []string{spareMedia, spareState, filepath.Dir(chatFile)} {
		must(t, os.MkdirAll(d, 0o700))
	}
	must(t, os.WriteFile(chatFile, []byte("jpeg"), 0o600))
	must(t, os.Symlink("tg_direct_1", adopted))
	for _, d := range []string{spareMedia, spareState} {
		must(t, os.Chtimes(d, old, old))
	}
	must(t, lchtimes(adopted, old))

	r, err := New(Config{Command: "true", Workspace: ws, StateDir: state}, nil)
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
	for _, d := range []string{mine, other, spareMedia, spareState, adopted} {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
	if _, err := os.Stat(chatFile); err != nil {
		t.Errorf("the chat's attachment went with the link to it: %v", err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("the run's own TMPDIR went: %v", err)
	}
}

// A claude's start makes the next one's TMPDIR while claude starts: the next start takes
// it (an empty directory of its own, never a used one) and a spare is made again; Close
// removes the spare.
func TestSpareTMPDIR(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	spare := func() string {
		deadline := time.Now().Add(10 * time.Second)
		for {
			f.r.mu.Lock()
			tmp := f.r.spareTmp[-1]
			f.r.mu.Unlock()
			if tmp != "" {
				return tmp
			}
			if time.Now().After(deadline) {
				t.Fatal("no spare TMPDIR was made after a start")
			}
			time.Sleep(5 * time.Millisecond) // made on a goroutine of the start
		}
	}
	tmpOf := func(key string) string {
		f.r.mu.Lock()
		defer f.r.mu.Unlock()
		return f.r.procs[key].tmpdir
	}
	mustOK(t, runTurn(t, f.r, TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: "hello"}), "echo: hello")
	first := spare()
	if first == tmpOf("a") {
		t.Fatalf("the spare is the running claude's TMPDIR %s", first)
	}
	if entries, err := os.ReadDir(first); err != nil || len(entries) != 0 {
		t.Fatalf("the spare TMPDIR: %v, %d entries", err, len(entries))
	}
	mustOK(t, runTurn(t, f.r, TurnRequest{Key: "b", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"}), "echo: hi")
	if got := tmpOf("b"); got != first {
		t.Fatalf("the second claude's TMPDIR is %s, not the spare %s", got, first)
	}
	second := spare()
	if second == first || second == tmpOf("a") {
		t.Fatalf("the new spare %s is a used TMPDIR", second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, f.r.Close(ctx))
	if _, err := os.Stat(second); !os.IsNotExist(err) {
		t.Fatalf("the spare TMPDIR after Close: %v", err)
	}
}

// lchtimes sets a link's own times (not its target's).
func lchtimes(path string, at time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(at.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}
