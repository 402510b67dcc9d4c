package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// repo makes a git repository with one commit on main.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "README"), "hello\n")
	run(t, dir, "add", "README")
	run(t, dir, "commit", "-qm", "first")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two chats work on one repository at once: each commits on its own branch
// in its own directory; the default branch and the repository's own status
// are untouched.
func TestEnsureTwoChats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := repo(t)
	if err := Check(ctx, r); err != nil {
		t.Fatal(err)
	}
	a, made, err := Ensure(ctx, r, "tg_group_-100")
	if err != nil || !made || a.Path != filepath.Join(r, ".clawhost/worktrees/tg_group_-100") || a.Branch != "clawhost/tg_group_-100" {
		t.Fatalf("Ensure: %+v %v %v", a, made, err)
	}
	b, _, err := Ensure(ctx, r, "tg_group_-200")
	if err != nil {
		t.Fatal(err)
	}
	if again, made, err := Ensure(ctx, r, "tg_group_-100"); err != nil || made || again != a {
		t.Fatalf("Ensure again: %+v %v %v", again, made, err)
	}
	write(t, filepath.Join(a.Path, "a.txt"), "a\n")
	run(t, a.Path, "add", "a.txt")
	run(t, a.Path, "commit", "-qm", "from a")
	write(t, filepath.Join(b.Path, "b.txt"), "b\n")
	run(t, b.Path, "add", "b.txt")
	run(t, b.Path, "commit", "-qm", "from b")
	if got := run(t, r, "log", "--format=%s", a.Branch); got != "from a\nfirst" {
		t.Errorf("branch a: %q", got)
	}
	if got := run(t, r, "log", "--format=%s", b.Branch); got != "from b\nfirst" {
		t.Errorf("branch b: %q", got)
	}
	if got := run(t, r, "log", "--format=%s", "main"); got != "first" {
		t.Errorf("main: %q", got)
	}
	if st := run(t, r, "status", "--porcelain"); st != "" {
		t.Errorf("the repository's status shows the worktrees: %q", st)
	}
}

// Reset keeps a dirty worktree; a clean one is made anew from HEAD, the old
// branch's commits kept under a branch of their own.
func TestReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := repo(t)
	w, _, err := Ensure(ctx, r, "c")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "wip.txt"), "unsaved\n")
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	if _, _, err := Reset(ctx, r, "c", now); !errors.Is(err, ErrDirty) {
		t.Fatalf("Reset of a dirty worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.Path, "wip.txt")); err != nil {
		t.Fatal("the dirty worktree's file is gone")
	}
	run(t, w.Path, "add", "wip.txt")
	run(t, w.Path, "commit", "-qm", "wip")
	w2, kept, err := Reset(ctx, r, "c", now)
	if err != nil || kept != "clawhost/c-20261124-100000" || w2 != w {
		t.Fatalf("Reset: %+v %q %v", w2, kept, err)
	}
	if got := run(t, r, "log", "--format=%s", kept); got != "wip\nfirst" {
		t.Errorf("the old commits: %q", got)
	}
	if got := run(t, r, "log", "--format=%s", w.Branch); got != "first" {
		t.Errorf("the new branch: %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.Path, "wip.txt")); err == nil {
		t.Error("the new worktree has the old branch's file")
	}
	if _, kept, err := Reset(ctx, r, "c", now.Add(time.Hour)); err != nil || kept != "" {
		t.Errorf("Reset of a branch with nothing of its own keeps %q, %v", kept, err)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if err := Check(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("a plain directory: %v", err)
	}
	empty := t.TempDir()
	run(t, empty, "init", "-q")
	if err := Check(ctx, empty); err == nil || !strings.Contains(err.Error(), "no commit") {
		t.Errorf("a repository without a commit: %v", err)
	}
}

// hostile is a repository whose .git/info/attributes gives every file a
// filter driver its .git/config defines, with smudge and clean programs
// that leave a marker in markers when they run: what a chat that can
// write the repository's .git plants (finding 4 of issue 76).
func hostile(t *testing.T) (dir, markers string) {
	t.Helper()
	dir = repo(t)
	markers = t.TempDir()
	evil := t.TempDir()
	for _, name := range []string{"smudge", "clean"} {
		p := filepath.Join(evil, name)
		sdktest.WriteExecutable(t, p, []byte("#!/bin/sh\ntouch '"+filepath.Join(markers, name)+"'\ncat\n"), 0o700)
		run(t, dir, "config", "filter.evil."+name, p)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=evil\n")
	return dir, markers
}

func ran(t *testing.T, markers string) []string {
	t.Helper()
	ents, err := os.ReadDir(markers)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestFilterDriversDoNotRun: the host's git makes a chat's worktree (git
// worktree add checks files out: smudge) and reads its status before a
// reset (a file whose time changed is cleaned to compare it) without
// running a filter the repository defines; a naive git runs both (the
// plants are live).
func TestFilterDriversDoNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	touch := func(t *testing.T, path string) {
		t.Helper()
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("naive", func(t *testing.T) {
		t.Parallel()
		dir, markers := hostile(t)
		wt := filepath.Join(t.TempDir(), "wt")
		run(t, dir, "worktree", "add", "-q", wt, "HEAD")
		touch(t, filepath.Join(wt, "README"))
		run(t, wt, "status", "--porcelain")
		if got := strings.Join(ran(t, markers), " "); got != "clean smudge" {
			t.Fatalf("a naive git ran %q of the plants, want clean smudge: the test proves nothing", got)
		}
	})
	t.Run("worktree", func(t *testing.T) {
		t.Parallel()
		dir, markers := hostile(t)
		w, _, err := Ensure(ctx, dir, "c")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(w.Path, "README")); err != nil || string(b) != "hello\n" {
			t.Errorf("the worktree's README: %q %v", b, err)
		}
		if got := ran(t, markers); len(got) > 0 {
			t.Errorf("Ensure ran %v", got)
		}
		touch(t, filepath.Join(w.Path, "README"))
		if _, _, err := Reset(ctx, dir, "c", time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		if got := ran(t, markers); len(got) > 0 {
			t.Errorf("Reset ran %v", got)
		}
	})
}
