package safegit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrRedirected: a working tree's .git leads somewhere other than its own
// repository — a symbolic link, or a file naming a directory that is not
// one of the repository's worktree admin directories naming it back. A
// chat could plant one to have git outside its sandbox read or write
// another agent's repository.
var ErrRedirected = errors.New("the .git leads to another repository")

// Layout is where git finds a working tree's repository. A Runner gives
// all three to git (GIT_WORK_TREE, GIT_DIR, GIT_COMMON_DIR), so git
// discovers nothing: neither a .git file nor the admin directory's
// commondir file is followed.
type Layout struct {
	// WorkTree is the top of the working tree.
	WorkTree string
	// GitDir is WorkTree/.git, or for a worktree its admin directory
	// <repo>/.git/worktrees/<name>.
	GitDir string
	// CommonDir is the repository's .git: GitDir, or <repo>/.git.
	CommonDir string
}

// Locate is the layout of the working tree dir (absolute). dir/.git is
// either a directory, the repository's own, or a file saying
// "gitdir: <repo>/.git/worktrees/<name>" — a worktree's admin directory,
// accepted only when <repo>/.git is a directory, and the admin
// directory's gitdir file (which git worktree add writes and a chat's
// sandbox leaves read-only) names dir/.git back. Anything else is
// ErrRedirected; no .git at all is ErrNotRepository.
//
// The back reference is what makes the repository dir's own: a chat can
// write a .git file naming any path, but not another agent's admin
// directory.
func Locate(dir string) (Layout, error) {
	if !filepath.IsAbs(dir) {
		return Layout{}, fmt.Errorf("%q: %w (the path is not absolute)", dir, ErrNotRepository)
	}
	dir = filepath.Clean(dir)
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Layout{}, fmt.Errorf("%s: %w", dir, ErrNotRepository)
	case err != nil:
		return Layout{}, fmt.Errorf("%s: %w", dir, err)
	case fi.IsDir():
		return Layout{WorkTree: dir, GitDir: dotgit, CommonDir: dotgit}, nil
	case !fi.Mode().IsRegular():
		return Layout{}, fmt.Errorf("%s is not a directory or a file: %w", dotgit, ErrRedirected)
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return Layout{}, fmt.Errorf("%s: %w", dir, err)
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return Layout{}, fmt.Errorf("%s holds no gitdir: %w", dotgit, ErrRedirected)
	}
	if !filepath.IsAbs(admin) {
		admin = filepath.Join(dir, admin)
	}
	admin = filepath.Clean(admin)
	worktrees := filepath.Dir(admin)
	common := filepath.Dir(worktrees)
	if filepath.Base(worktrees) != "worktrees" || filepath.Base(common) != ".git" {
		return Layout{}, fmt.Errorf("%s names %s, not a worktree's admin directory <repo>/.git/worktrees/<name>: %w", dotgit, admin, ErrRedirected)
	}
	for _, d := range []string{common, worktrees, admin} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return Layout{}, fmt.Errorf("%s names %s, and %s is not a directory: %w", dotgit, admin, d, ErrRedirected)
		}
	}
	back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil || !sameFile(strings.TrimSpace(string(back)), dotgit) {
		return Layout{}, fmt.Errorf("%s names %s, whose worktree is not %s: %w", dotgit, admin, dir, ErrRedirected)
	}
	return Layout{WorkTree: dir, GitDir: admin, CommonDir: common}, nil
}

// sameFile reports whether the path a worktree's admin directory names
// (git writes it resolved, without symbolic links) is dotgit.
func sameFile(named, dotgit string) bool {
	if !filepath.IsAbs(named) {
		return false
	}
	named = filepath.Clean(named)
	if named == dotgit {
		return true
	}
	real, err := filepath.EvalSymlinks(filepath.Dir(dotgit))
	return err == nil && named == filepath.Join(real, ".git")
}

// Unlinked reports ErrRedirected (wrapped) when git would follow a
// symbolic link out of the layout's git directories, or read another
// repository's objects: a chat that can write its .git could link its
// refs, objects, logs, HEAD or index to another agent's — whose paths it
// can guess — and have git outside its sandbox read them. It looks at
// every entry of the git and common directories (but hooks, which a
// Runner never runs, and description), at refs and logs throughout, at
// worktrees, objects, objects/pack and objects/info; and it refuses an
// alternates file. A loose object linked by its name is not looked for:
// its name is the hash of content the chat cannot read.
func Unlinked(l Layout) error {
	dirs := []string{l.CommonDir}
	if l.GitDir != l.CommonDir {
		dirs = append(dirs, l.GitDir)
	}
	for _, d := range dirs {
		if err := noLinkIn(d, "hooks", "description"); err != nil {
			return err
		}
		for _, tree := range []string{"refs", "logs"} {
			err := filepath.WalkDir(filepath.Join(d, tree), func(p string, e fs.DirEntry, err error) error {
				switch {
				case errors.Is(err, fs.ErrNotExist):
					return nil
				case err != nil:
					return err
				case e.Type()&fs.ModeSymlink != 0:
					return linked(p)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	for _, sub := range []string{"worktrees", "objects", filepath.Join("objects", "pack"), filepath.Join("objects", "info")} {
		if err := noLinkIn(filepath.Join(l.CommonDir, sub)); err != nil {
			return err
		}
	}
	for _, f := range []string{"alternates", "http-alternates"} {
		p := filepath.Join(l.CommonDir, "objects", "info", f)
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s lends git another repository's objects: %w", p, ErrRedirected)
		}
	}
	return nil
}

// noLinkIn reports a symbolic link among dir's entries (but skip); a
// directory that does not exist has none.
func noLinkIn(dir string, skip ...string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 && !slices.Contains(skip, e.Name()) {
			return linked(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

func linked(p string) error {
	return fmt.Errorf("%s is a symbolic link: %w", p, ErrRedirected)
}

// WorktreeAdmin is the admin directory of the worktree at worktree when it
// is one of repo's (Locate's rule, with repo/.git its common directory);
// "" otherwise.
func WorktreeAdmin(repo, worktree string) string {
	l, err := Locate(worktree)
	if err != nil || l.GitDir == l.CommonDir || l.CommonDir != filepath.Join(filepath.Clean(repo), ".git") {
		return ""
	}
	return l.GitDir
}
