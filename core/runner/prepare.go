package runner

// A sandbox's preparation: the directories and files on the disk its mounts need, made
// before claude starts in it.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/core/sandbox"
	"github.com/clawhost/clawhost/sdk/safegit"
)

// preparing is a sandbox's preparation (prepareSandbox) begun at the start of a claude's
// start, on a goroutine of its own: the chat's state and media directories and files are
// made on the disk while the host makes the TMPDIR and the system prompt file, not after
// them (traced, a first turn at load 5 on ext4: the TMPDIR 0.41 ms, the prompt file 0.42,
// the chat's directories 0.84).
type preparing struct {
	done chan struct{}
	err  error
}

// wait is the preparation's outcome, once it is done; nil for none.
func (p *preparing) wait() error {
	if p == nil {
		return nil
	}
	<-p.done
	return p.err
}

// prepareEarly begins the preparation of the sandbox of key's claude described by l,
// which starts next; nil when c's claudes run unsandboxed.
func (r *Runner) prepareEarly(key string, l launch) *preparing {
	c := l.cfg
	if r.sandboxOf(c).bwrap == "" {
		return nil
	}
	sl := sandboxLaunch{env: l.env, media: l.media, worktree: l.dir,
		chatState: l.chatState(r.cfg.StateDir, key), sessionID: l.sessionID, resume: l.resume}
	p := &preparing{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = r.prepareSandbox(c, sl)
	}()
	return p
}

// prepared is l's sandbox prepared: what prepareEarly began, waited for, else made now.
func (r *Runner) prepared(c *Config, l sandboxLaunch) error {
	if l.prep != nil {
		return l.prep.wait()
	}
	return r.prepareSandbox(c, l)
}

// prepareSandbox makes what the sandbox of l binds and must exist: the chat's media
// directory, the workspace's .claude, the worktree's directories, the chat's claude state.
func (r *Runner) prepareSandbox(c *Config, l sandboxLaunch) error {
	if l.media != "" {
		// Bound into the sandbox, so it must exist; the host puts the
		// chat's attachments there.
		if err := os.MkdirAll(filepath.Join(c.Workspace, "media", l.media), 0o700); err != nil {
			return fmt.Errorf("create media directory: %w", err)
		}
	}
	if err := ensureDir(filepath.Join(c.Workspace, ".claude")); err != nil {
		return err
	}
	if l.worktree != "" {
		if err := prepareWorktree(c.Workspace, l.worktree); err != nil {
			return err
		}
	}
	return r.prepareChatState(c, l)
}

// prepareWorktree makes what the sandbox of a worktree's chat binds: the
// worktree's .claude (read-only there), the branches' ref and log
// directories (writable), and an empty config.worktree in its admin
// directory (read-only: a chat must not give its worktree configuration
// the host's git would read).
func prepareWorktree(ws, worktree string) error {
	if err := ensureDir(filepath.Join(worktree, ".claude")); err != nil {
		return err
	}
	git := filepath.Join(ws, ".git")
	for _, d := range []string{filepath.Join(git, "refs", "heads", sandbox.BranchDir), filepath.Join(git, "logs", "refs", "heads", sandbox.BranchDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
	}
	if admin := safegit.WorktreeAdmin(ws, worktree); admin != "" {
		f, err := os.OpenFile(filepath.Join(admin, "config.worktree"), os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
		f.Close()
	}
	return nil
}

// ensureDir creates the workspace's .claude when missing, so the sandbox
// can make it read-only: else claude could create project settings (allow
// rules, hooks) that its next start would load.
func ensureDir(p string) error {
	if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}
