package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// workModule is one module of the workspace: its directory and path, and
// the versions the proxy serves it at.
type workModule struct {
	dir      string // absolute
	path     string
	versions []string
}

// workspace reads the go.work of the checkout at root and returns its
// modules, each at every version another workspace module requires it at,
// plus release (if not empty) for all of them: the root module is required
// by nobody, so it is served only at the release version.
func workspace(root, release string) ([]workModule, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read workspace: %w", err)
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parse workspace: %w", err)
	}
	var mods []workModule
	requires := map[string][]string{}
	for _, u := range wf.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.Path))
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, fmt.Errorf("read module %s: %w", u.Path, err)
		}
		mf, err := modfile.ParseLax(filepath.Join(dir, "go.mod"), data, nil)
		if err != nil {
			return nil, fmt.Errorf("parse module %s: %w", u.Path, err)
		}
		if mf.Module == nil {
			return nil, fmt.Errorf("parse module %s: no module line", u.Path)
		}
		for _, r := range mf.Require {
			requires[r.Mod.Path] = append(requires[r.Mod.Path], r.Mod.Version)
		}
		mods = append(mods, workModule{dir: dir, path: mf.Module.Mod.Path})
	}
	for i := range mods {
		vs := requires[mods[i].path]
		if release != "" {
			vs = append(vs, release)
		}
		slices.Sort(vs)
		mods[i].versions = slices.Compact(vs)
	}
	return mods, nil
}

// writeProxy writes the GOPROXY layout (<module>/@v/list, <v>.info, <v>.mod,
// <v>.zip) of every module of the workspace at root into dir, each version
// made of the module's files as they are in the working tree (tracked and
// untracked, not those git ignores): what a release tagged now would serve.
// The .info time is the commit's.
func writeProxy(ctx context.Context, root, dir, release string) ([]workModule, error) {
	mods, err := workspace(root, release)
	if err != nil {
		return nil, err
	}
	at, err := commitTime(ctx, root)
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if len(m.versions) == 0 {
			continue
		}
		if err := writeModule(ctx, m, dir, at); err != nil {
			return nil, fmt.Errorf("write proxy of %s: %w", m.path, err)
		}
	}
	return mods, nil
}

// writeModule writes one module's versions into the proxy at dir.
func writeModule(ctx context.Context, m workModule, dir string, at time.Time) error {
	esc, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	files, err := treeFiles(ctx, m.dir)
	if err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
	if err != nil {
		return err
	}
	for _, v := range m.versions {
		var zip bytes.Buffer
		if err := modzip.Create(&zip, module.Version{Path: m.path, Version: v}, files); err != nil {
			return fmt.Errorf("zip %s: %w", v, err)
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{v, at.UTC()})
		if err != nil {
			return err
		}
		for ext, data := range map[string][]byte{".zip": zip.Bytes(), ".mod": gomod, ".info": info} {
			if err := os.WriteFile(filepath.Join(vdir, v+ext), data, 0o644); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(vdir, "list"), []byte(strings.Join(m.versions, "\n")+"\n"), 0o644)
}

// treeFiles lists the files of the working tree under dir that git does not
// ignore (tracked or not; a tracked file deleted from the tree is left
// out). modzip.Create leaves out those of nested modules.
func treeFiles(ctx context.Context, dir string) ([]modzip.File, error) {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var files []modzip.File
	seen := map[string]bool{}
	for name := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		files = append(files, treeFile{dir: dir, name: name, info: fi})
	}
	return files, nil
}

// treeFile is a file of the working tree as modzip.Create takes it.
type treeFile struct {
	dir, name string
	info      fs.FileInfo
}

func (f treeFile) Path() string                 { return f.name }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.dir, f.name)) }

// commitTime is the time of the checkout's HEAD commit; outside a
// repository with commits, the Unix epoch (any fixed time will do).
func commitTime(ctx context.Context, root string) (time.Time, error) {
	cmd := exec.CommandContext(ctx, "git", "log", "-1", "--format=%cI")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return time.Unix(0, 0), nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	if err != nil {
		return time.Time{}, fmt.Errorf("commit time %q: %w", out, err)
	}
	return t, nil
}
