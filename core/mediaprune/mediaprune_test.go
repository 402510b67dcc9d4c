package mediaprune

import (
	"github.com/clawhost/clawhost/core/internal/tstime"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// tree writes files with the given ages below dir.
func tree(t *testing.T, dir string, ages map[string]time.Duration) {
	t.Helper()
	for name, age := range ages {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestPrune(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	media := filepath.Join(base, "media")
	outside := filepath.Join(base, "outside")
	day := 24 * time.Hour
	tree(t, media, map[string]time.Duration{
		"tg_direct_1/old.jpg":     40 * day,
		"tg_direct_1/new.jpg":     2 * day,
		"tg_direct_2/old.jpg":     31 * day,
		"tg_direct_2/older.pdf":   365 * day,
		"tg_group_3/nested/x.txt": 40 * day,
		"loose.bin":               40 * day,
	})
	tree(t, outside, map[string]time.Duration{"keep.txt": 400 * day, "sub/keep.txt": 400 * day})
	// Links: to an old file outside, to a directory outside. Neither
	// target may be touched; the links themselves go by their own age
	// (new here, so they stay).
	if err := os.Symlink(filepath.Join(outside, "keep.txt"), filepath.Join(media, "tg_direct_1", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "sub"), filepath.Join(media, "linked-dir")); err != nil {
		t.Fatal(err)
	}
	// An empty directory: an old one goes; one made just now stays (the
	// host made a session's directory for the attachment it is about to
	// store, or for claude's sandbox to bind).
	for _, d := range []string{"empty", "fresh"} {
		if err := os.Mkdir(filepath.Join(media, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(filepath.Join(media, "empty"), now.Add(-40*day), now.Add(-40*day)); err != nil {
		t.Fatal(err)
	}

	res, err := Prune(media, now.Add(-30*day))
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 5 || res.Dirs != 4 {
		t.Errorf("removed %+v, want 5 files and 4 directories (tg_direct_2, nested, tg_group_3, empty)", res)
	}
	for p, want := range map[string]bool{
		"tg_direct_1/old.jpg":  false,
		"tg_direct_1/new.jpg":  true,
		"tg_direct_1/link.txt": true,
		"tg_direct_2":          false,
		"tg_group_3":           false,
		"loose.bin":            false,
		"empty":                false,
		"fresh":                true,
		"linked-dir":           true,
		".":                    true,
	} {
		if got := exists(filepath.Join(media, p)); got != want {
			t.Errorf("%s exists: %v, want %v", p, got, want)
		}
	}
	for _, p := range []string{"keep.txt", "sub/keep.txt"} {
		if !exists(filepath.Join(outside, p)) {
			t.Errorf("a link's target %s was deleted", p)
		}
	}

	// A link older than the cutoff (any link made before the present is
	// older than an hour ahead) is removed, never its target.
	link := filepath.Join(media, "tg_direct_1", "link.txt")
	if _, err := Prune(media, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if exists(link) || !exists(filepath.Join(outside, "keep.txt")) {
		t.Errorf("an old link: link left %v, target kept %v; want the link gone and the target kept", exists(link), exists(filepath.Join(outside, "keep.txt")))
	}
}

func TestPruneRefusesALinkedMediaDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	tree(t, filepath.Join(base, "elsewhere"), map[string]time.Duration{"a/old.txt": 1000 * time.Hour})
	if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "media")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(filepath.Join(base, "media"), now); err == nil {
		t.Error("a media directory that is a link was pruned")
	}
	if !exists(filepath.Join(base, "elsewhere", "a", "old.txt")) {
		t.Error("a file behind the linked media directory was deleted")
	}
	if res, err := Prune(filepath.Join(base, "missing"), now); err != nil || res != (Result{}) {
		t.Errorf("a missing media directory: %+v, %v", res, err)
	}
}

// fakeClock's After hands the test each wait: the loop has finished a
// prune when it asks for the next wait. The pruner uses nothing else of
// the clock (tstime.Std stands in for the rest).
type fakeClock struct {
	tstime.Std
	now   chan time.Time // the time each prune reads
	waits chan chan time.Time
}

func (c *fakeClock) Now() time.Time { return <-c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	if d != Interval {
		panic("unexpected wait")
	}
	ch := make(chan time.Time, 1)
	c.waits <- ch
	return ch
}

func TestPrunerRunsAtStartThenEveryInterval(t *testing.T) {
	t.Parallel()
	media := t.TempDir()
	day := 24 * time.Hour
	tree(t, media, map[string]time.Duration{"s/a.jpg": 10 * day, "s/b.jpg": 20 * day})
	clock := &fakeClock{now: make(chan time.Time), waits: make(chan chan time.Time)}
	p := New(Options{Clock: clock})
	p.Start(media, 15*day)

	clock.now <- now // the prune at start
	tick := <-clock.waits
	if exists(filepath.Join(media, "s/b.jpg")) || !exists(filepath.Join(media, "s/a.jpg")) {
		t.Fatal("the first prune did not remove exactly the file older than 15 days")
	}
	tick <- now.Add(Interval)
	clock.now <- now.Add(6 * day) // a.jpg is 16 days old now
	tick = <-clock.waits
	if exists(filepath.Join(media, "s")) {
		t.Fatal("the second prune did not remove the aged file and its directory")
	}
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	<-stopped
	_ = tick

	// keep ≤ 0 keeps everything: no prune runs (Now would block).
	p.Start(media, 0)
	p.Stop()
}

// A spare claude's media directory, and the link a chat's adoption leaves of it, are
// the runner's while that claude lives, whatever their age (core/internal/sparedir).
func TestPruneLeavesSpares(t *testing.T) {
	t.Parallel()
	media := filepath.Join(t.TempDir(), "media")
	day := 24 * time.Hour
	tree(t, media, map[string]time.Duration{"+spare-aa/old.txt": 40 * day, "tg_direct_1/old.jpg": 40 * day})
	if err := os.Symlink("tg_direct_1", filepath.Join(media, "+spare-bb")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(media, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"+spare-aa/old.txt": true, "+spare-bb": true, "tg_direct_1/old.jpg": false} {
		if got := exists(filepath.Join(media, p)); got != want {
			t.Errorf("%s exists: %v, want %v", p, got, want)
		}
	}
}
