// Package sparedir keeps the directories of a sandboxed spare claude (core/runner's
// spare.go, issue 84) and hands them to the brand-new chat that adopts it.
//
// The sandbox binds a chat's media directory (<workspace>/media/<chat>) and its claude
// state (<stateDir>/chats/<key>) when claude starts, and a spare starts before its chat
// is known. So a spare gets directories of its own: <workspace>/media/+spare-<id> and
// <stateDir>/spares/<id>. A bind mount follows the directory, not its name: renaming
// them onto a chat that has neither yet (or empty directories, Vacant; the attachments
// of its first message are carried over first, Carriable) makes them that chat's, and
// the sandbox, unchanged, shows claude the chat's state and attachments. Inside the
// sandbox the media keep the spare's path; on the host that name becomes a link to the
// chat's directory, so a path claude writes back (a MEDIA: line, send_file) resolves to
// the chat's own files.
//
// No chat's directory name contains '+' (sessionkey.Dir writes it %2B), so no chat's
// directory is ever taken for a spare's, and Sweep removes only what spares left.
package sparedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Prefix starts the name of a spare's media directory under <workspace>/media.
const Prefix = "+spare-"

// ErrTaken is Adopt's error when the chat has media or claude state already (a
// directory that is not empty): it is no brand-new chat, and nothing was moved.
var ErrTaken = errors.New("the chat has directories of its own already")

// Dirs are one spare's directories. Media's base name is what the sandbox shows under
// <workspace>/media, before and after a chat adopts it.
type Dirs struct {
	Media, State string
}

// New names a spare's directories in workspace and stateDir, after a random id; it
// makes none (the sandbox's preparation does, as for a chat's).
func New(workspace, stateDir string) (Dirs, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Dirs{}, err
	}
	id := hex.EncodeToString(b[:])
	return Dirs{Media: filepath.Join(workspace, "media", Prefix+id), State: filepath.Join(stateDir, "spares", id)}, nil
}

// Name is the media directory's name under <workspace>/media.
func (d Dirs) Name() string { return filepath.Base(d.Media) }

// Adopt gives d to the chat whose media directory is media (beside d.Media) and claude
// state state: d.State, when the spare has one, and d.Media are renamed onto the chat's,
// which must be vacant (ErrTaken, and d stays as it was) — the chat's media directory
// may hold the attachments of its first message (Carriable), which move into d.Media
// first — and d.Media becomes a link to the chat's media directory. Any other failure
// undoes what was done.
func (d Dirs) Adopt(media, state string) error {
	if filepath.Dir(media) != filepath.Dir(d.Media) {
		return fmt.Errorf("the chat's media directory %s is not beside the spare's", media)
	}
	var undo []func()
	fail := func(err error) error {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return err
	}
	for _, mv := range [][2]string{{d.State, state}, {d.Media, media}} {
		from, to := mv[0], mv[1]
		if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) && from == d.State {
			if !Vacant(to) {
				return fail(ErrTaken)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return fail(err)
		}
		if from == d.Media {
			back, err := carry(to, from)
			undo = append(undo, back)
			if err != nil {
				return fail(err)
			}
		}
		// rename(2) takes a directory's place only when it is empty, in one step: a
		// file the host puts there meanwhile makes it fail, never lost.
		if err := syscall.Rename(from, to); err != nil { // os.Rename refuses any directory there
			if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
				err = ErrTaken
			}
			return fail(err)
		}
		undo = append(undo, func() { _ = syscall.Rename(to, from) })
	}
	if err := os.Symlink(filepath.Base(media), d.Media); err != nil {
		return fail(fmt.Errorf("link the spare's media path to the chat's: %w", err))
	}
	return nil
}

// maxCarried bounds the attachments Adopt carries from a chat's media directory into
// the spare's (a first message's, or what an earlier unsandboxed claude of the chat
// had): more, and the chat starts its own claude.
const maxCarried = 16

// Carriable tells whether path is Vacant or a directory of at most maxCarried completed
// files (no download in progress, a .part), which Adopt carries into the spare's.
func Carriable(path string) bool {
	if Vacant(path) {
		return true
	}
	entries, err := os.ReadDir(path)
	return err == nil && carriable(entries)
}

// carriable is the rule of Carriable on a directory's entries: at most maxCarried, each
// a completed file (a download in progress is a .part).
func carriable(entries []fs.DirEntry) bool {
	if len(entries) > maxCarried {
		return false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".part") {
			return false
		}
	}
	return true
}

// carry moves the files of the chat's media directory from into the spare's, to, one
// rename each; back moves them back. Entries that are not carriable are ErrTaken, before
// anything moved; a file arriving after the listing makes the rename of the directory
// fail (it is not empty), and back undoes the moves.
func carry(from, to string) (back func(), err error) {
	var moved []string
	back = func() {
		for _, n := range moved {
			_ = os.Rename(filepath.Join(to, n), filepath.Join(from, n))
		}
	}
	entries, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) {
		return back, nil
	}
	if err != nil {
		return back, err
	}
	if !carriable(entries) {
		return back, ErrTaken
	}
	for _, e := range entries {
		n := e.Name()
		if _, err := os.Lstat(filepath.Join(to, n)); !errors.Is(err, fs.ErrNotExist) {
			return back, ErrTaken
		}
		if err := os.Rename(filepath.Join(from, n), filepath.Join(to, n)); err != nil {
			return back, err
		}
		moved = append(moved, n)
	}
	return back, nil
}

// Vacant tells whether path does not exist or is an empty directory: a chat's directory
// a spare's may take the place of.
func Vacant(path string) bool {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.IsDir() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// Remove removes what d leaves once its process ended: the link a chat's adoption left,
// or the directories of a spare no chat adopted. It never follows a link.
func (d Dirs) Remove() {
	_ = os.RemoveAll(d.Media) // a link is removed itself, never what it names
	_ = os.RemoveAll(d.State)
}

// Sweep removes what spares of an earlier run left in workspace and stateDir (a host
// killed before their processes ended): the entries last changed before before, so a
// spare of this run's is never taken. It returns how many it removed.
func Sweep(workspace, stateDir string, before time.Time) (int, error) {
	var names []string
	if workspace != "" {
		names, _ = filepath.Glob(filepath.Join(workspace, "media", Prefix+"*"))
	}
	if stateDir != "" {
		states, _ := filepath.Glob(filepath.Join(stateDir, "spares", "*"))
		names = append(names, states...)
	}
	n := 0
	var errs []error
	for _, name := range names {
		fi, err := os.Lstat(name)
		if err != nil || !fi.ModTime().Before(before) {
			continue
		}
		if err := os.RemoveAll(name); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// IsSpare tells whether name, an entry of <workspace>/media, is a spare's.
func IsSpare(name string) bool { return strings.HasPrefix(name, Prefix) }
