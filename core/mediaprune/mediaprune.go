// Package mediaprune deletes old attachments: inbound media is stored in
// <workspace>/media/<session>/ (core/turn) and kept for agent.media_keep.
// A [Pruner] removes the files whose modification time is older than that,
// and the directories they leave empty, once when started and then every
// hour. It never follows a symbolic link: a link found under the media
// directory is removed like a file (by its own age), its target is never
// touched, and a media directory that is itself a link is left alone. A
// directory swapped for a link while a prune walks it is not guarded
// against: that takes writing to the media directory, which the claude
// sandbox does not allow and an unsandboxed claude could delete the files
// directly anyway. A spare claude's directory (+spare-<id>, core/internal/sparedir) is
// left to the runner, which removes it when that claude ends: its sandbox shows it.
//
// The host (core) starts it, restarts it on reload and stops it at
// shutdown; tests drive it with a fake clock (Options.Clock).
package mediaprune

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/sparedir"
	"github.com/clawhost/clawhost/core/internal/tstime"

	"github.com/hashicorp/go-hclog"
)

// Interval is how often a running Pruner looks again.
const Interval = time.Hour

// Result counts what one prune removed.
type Result struct {
	Files, Dirs int
}

// Prune removes, below dir, the files and links last modified before
// before, then the directories left empty: those it emptied, and empty
// ones last modified before before (dir itself stays). An empty directory
// made since before stays: the host makes a session's directory before it
// puts an attachment there, and claude's sandbox binds it. It does not
// follow links. A dir that does not exist is nothing to do; a dir that is
// a link is refused. Errors on single entries are collected; the rest is
// still pruned.
func Prune(dir string, before time.Time) (Result, error) {
	var res Result
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return res, nil
	case err != nil:
		return res, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return res, errors.New("the media directory is a symbolic link; not pruned")
	case !fi.IsDir():
		return res, errors.New("the media directory is not a directory; not pruned")
	}
	var errs []error
	var dirs []string
	old := map[string]bool{}     // directories last modified before before
	emptied := map[string]bool{} // directories this prune removed entries of
	// WalkDir reads entries with lstat semantics: a link to a directory is
	// an entry, not a directory to enter.
	werr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			if d != nil && d.IsDir() && path != dir {
				return fs.SkipDir
			}
			return nil
		}
		if filepath.Dir(path) == dir && sparedir.IsSpare(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path != dir {
				dirs = append(dirs, path)
				if info, err := d.Info(); err == nil && info.ModTime().Before(before) {
					old[path] = true
				}
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil
		}
		if info.ModTime().Before(before) {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			} else if err == nil {
				res.Files++
				emptied[filepath.Dir(path)] = true
			}
		}
		return nil
	})
	if werr != nil {
		errs = append(errs, werr)
	}
	// Deepest first, so a directory emptied of empty directories goes too.
	// Remove fails on a directory that is not empty (a file arrived
	// meanwhile): that one stays.
	slices.Reverse(dirs)
	for _, d := range dirs {
		if (old[d] || emptied[d]) && os.Remove(d) == nil {
			res.Dirs++
			emptied[filepath.Dir(d)] = true
		}
	}
	return res, errors.Join(errs...)
}

// Options configure a Pruner.
type Options struct {
	Logger hclog.Logger
	// Clock defaults to the system clock.
	Clock tstime.Clock
}

// Pruner prunes a media directory at start and every Interval.
type Pruner struct {
	log   hclog.Logger
	clock tstime.Clock

	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

// New returns a Pruner that is not running.
func New(opts Options) *Pruner {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	opts.Clock = tstime.Or(opts.Clock)
	return &Pruner{log: opts.Logger.Named("media"), clock: opts.Clock}
}

// Start (re)starts pruning dir, keeping files for keep: the previous run
// is stopped, then one prune runs at once (in the background) and then
// one every Interval. keep ≤ 0 keeps everything: nothing runs.
func (p *Pruner) Start(dir string, keep time.Duration) {
	p.Stop()
	if keep <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.mu.Lock()
	p.stop, p.done = cancel, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		for {
			res, err := Prune(dir, p.clock.Now().Add(-keep))
			if err != nil {
				p.log.Warn("pruning old attachments", "dir", dir, "error", err)
			}
			if res.Files > 0 || res.Dirs > 0 {
				p.log.Info("old attachments deleted", "files", res.Files, "dirs", res.Dirs, "older_than", keep)
			}
			select {
			case <-ctx.Done():
				return
			case <-p.clock.After(Interval):
			}
		}
	}()
}

// Stop ends the running prune loop and waits for it; a prune in progress
// finishes first.
func (p *Pruner) Stop() {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
