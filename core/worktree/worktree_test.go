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
