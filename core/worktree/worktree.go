// Package worktree gives each chat of an agent with agent.worktrees its own
// git worktree of the agent's workspace (a git repository), so two chats can
// change one repository at once without stepping on each other: the chat
// named n works in <workspace>/.clawhost/worktrees/n on the branch
// clawhost/n, made from the repository's HEAD on its first turn.
//
// Nothing is ever force-deleted: Reset keeps a worktree with uncommitted
// changes (and says so), and keeps the old branch's commits under a branch
// of its own.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk/safegit"
)

// Dir is where the worktrees live, under the repository.
const Dir = ".clawhost/worktrees"

// BranchPrefix starts the branch of every chat's worktree.
const BranchPrefix = "clawhost/"

// ErrDirty: Reset found uncommitted changes and kept the worktree.
var ErrDirty = errors.New("the worktree has uncommitted changes")

// Worktree is one chat's worktree.
type Worktree struct {
	// Path is its directory; Branch its branch.
	Path, Branch string
}

// Of is the worktree of the chat called name (a single path element, such
// as sessionkey.Dir's) in repo. It need not exist.
func Of(repo, name string) Worktree {
	return Worktree{Path: filepath.Join(repo, Dir, name), Branch: BranchPrefix + strings.ReplaceAll(name, "~", "-")}
}

// Check reports why repo cannot hold worktrees, nil when it can.
func Check(ctx context.Context, repo string) error {
	if _, err := git(ctx, repo, "rev-parse", "--git-dir"); err != nil {
		return fmt.Errorf("%s is not a git repository (worktrees need one: git init, and a first commit): %w", repo, err)
	}
	if _, err := git(ctx, repo, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return fmt.Errorf("the repository %s has no commit yet (a worktree starts from HEAD): make a first commit", repo)
	}
	return nil
}

// Ensure makes the chat's worktree unless it exists, and reports whether it
// made it. The worktrees' directory is excluded from the repository's own
// status (.git/info/exclude).
func Ensure(ctx context.Context, repo, name string) (Worktree, bool, error) {
	w := Of(repo, name)
	if _, err := os.Stat(filepath.Join(w.Path, ".git")); err == nil {
		return w, false, nil
	}
	if err := exclude(ctx, repo); err != nil {
		return w, false, err
	}
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o700); err != nil {
		return w, false, fmt.Errorf("worktree: %w", err)
	}
	// A worktree pruned or removed by hand leaves its branch: take it up
	// again rather than lose its commits.
	args := []string{"worktree", "add", "-b", w.Branch, w.Path, "HEAD"}
	if _, err := git(ctx, repo, "rev-parse", "--verify", "-q", "refs/heads/"+w.Branch); err == nil {
		args = []string{"worktree", "add", w.Path, w.Branch}
	}
	_, _ = git(ctx, repo, "worktree", "prune")
	if _, err := git(ctx, repo, args...); err != nil {
		return w, false, fmt.Errorf("create the worktree %s: %w", w.Path, err)
	}
	return w, true, nil
}

// Reset makes the chat's worktree anew from the repository's HEAD. A
// worktree with uncommitted changes is kept (ErrDirty); the old branch, with
// any commit HEAD does not have, is kept as <branch>-<time> (returned as
// kept; "" when it had nothing of its own and was deleted).
func Reset(ctx context.Context, repo, name string, now time.Time) (w Worktree, kept string, err error) {
	w = Of(repo, name)
	if _, err := os.Stat(filepath.Join(w.Path, ".git")); err == nil {
		out, err := git(ctx, w.Path, "status", "--porcelain", "--ignore-submodules=all")
		if err != nil {
			return w, "", fmt.Errorf("read the worktree's status: %w", err)
		}
		if len(bytes.TrimSpace(out)) > 0 {
			return w, "", ErrDirty
		}
		if _, err := git(ctx, repo, "worktree", "remove", w.Path); err != nil {
			return w, "", fmt.Errorf("remove the worktree: %w", err)
		}
	}
	if _, err := git(ctx, repo, "rev-parse", "--verify", "-q", "refs/heads/"+w.Branch); err == nil {
		own, err := git(ctx, repo, "rev-list", "--count", "HEAD.."+w.Branch)
		if err != nil {
			return w, "", fmt.Errorf("compare the branch: %w", err)
		}
		if strings.TrimSpace(string(own)) == "0" {
			_, err = git(ctx, repo, "branch", "-d", w.Branch)
		} else {
			kept = w.Branch + "-" + now.UTC().Format("20060102-150405")
			_, err = git(ctx, repo, "branch", "-m", w.Branch, kept)
		}
		if err != nil {
			return w, "", fmt.Errorf("keep the old branch: %w", err)
		}
	}
	w, _, err = Ensure(ctx, repo, name)
	return w, kept, err
}

// exclude adds the worktrees' directory to .git/info/exclude once.
func exclude(ctx context.Context, repo string) error {
	out, err := git(ctx, repo, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	path := strings.TrimSpace(string(out))
	if !filepath.IsAbs(path) {
		path = filepath.Join(repo, path)
	}
	const line = "/.clawhost/"
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(line+"\n")) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		_, _ = f.WriteString("\n")
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// git runs git in dir (the top of the repository or of one of its
// worktrees) and returns its output, or an error with what it said. The
// repository is one the chats' claude can write (its objects, its
// branches, their worktrees), so git runs as the plugins' safe git does
// (safegit.Runner): nothing of the host's environment but PATH, every way
// configuration runs a program turned off — the filter drivers a checkout
// or a status would run included — and the repository given, never
// discovered from a .git file, whatever the repository's files say.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return safegit.Runner{Dir: dir}.Run(ctx, args...)
}
