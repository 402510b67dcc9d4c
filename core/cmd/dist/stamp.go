package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stamp is what a release's binaries say about themselves (clawhost
// version) and what names its archives.
type stamp struct {
	// Version is the v* tag at HEAD without its "v" ("0.9.0"), else what
	// git describe says ("649f459", "v0.9.0-3-g649f459"), "-dirty" when the
	// tree has changes.
	Version string
	// Commit is HEAD's short hash.
	Commit string
	// Time is HEAD's commit time: the build date and every archive entry's
	// time, so a rebuild of the commit gives the same bytes.
	Time time.Time
}

// stampOf reads the stamp of the checkout at repo from git.
func stampOf(ctx context.Context, repo string) (stamp, error) {
	desc, err := git(ctx, repo, "describe", "--tags", "--match", "v[0-9]*", "--always", "--dirty")
	if err != nil {
		return stamp{}, err
	}
	commit, err := git(ctx, repo, "rev-parse", "--short=7", "HEAD")
	if err != nil {
		return stamp{}, err
	}
	ct, err := git(ctx, repo, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return stamp{}, err
	}
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return stamp{}, fmt.Errorf("read the commit time %q: %w", ct, err)
	}
	return stamp{Version: strings.TrimPrefix(desc, "v"), Commit: commit, Time: time.Unix(sec, 0).UTC()}, nil
}

// git runs git in repo and returns its trimmed output.
func git(ctx context.Context, repo string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// ldflags are the linker flags of a release binary: no symbol table or
// DWARF (-s -w), no build id (it hashes inputs that differ between
// machines), and the stamp clawhost version prints.
func ldflags(st stamp) string {
	return fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s -X main.date=%s",
		st.Version, st.Commit, st.Time.Format(time.RFC3339))
}

// goBuild builds pkgs (main packages under repo, "./plugins/x/cmd/y") for
// t into dir, one executable each, named for the package's directory.
// Static (CGO_ENABLED=0: the SQLite driver is pure Go), -trimpath (no paths
// of this machine), grpcnotrace (as make build; see the Makefile). A
// package in a module of its own under repo (plugins/matrix: its go.mod
// says why) is built in that module with GOWORK=off, as the Makefile's
// SEPARATE_PLUGINS are, and with goolm (mautrix's crypto in pure Go).
func goBuild(ctx context.Context, repo string, t platform, st stamp, dir string, pkgs []string) error {
	for _, m := range byModule(repo, pkgs) {
		tags, env := "grpcnotrace", []string(nil)
		if m.dir != repo {
			tags, env = "grpcnotrace goolm", []string{"GOWORK=off"}
		}
		args := append([]string{"build", "-trimpath", "-tags", tags, "-ldflags", ldflags(st), "-o", dir + string(os.PathSeparator)}, m.pkgs...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = m.dir
		cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch), env...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build in %s: %w\n%s", m.dir, err, stderr.String())
		}
	}
	return nil
}

// module is the packages of pkgs in one Go module: its directory, and the
// packages relative to it.
type module struct {
	dir  string
	pkgs []string
}

// byModule groups pkgs ("./path" under repo) by the module they are in:
// the nearest directory with a go.mod at or above the package, up to repo
// (the repository's own module first).
func byModule(repo string, pkgs []string) []module {
	out := []module{{dir: repo}}
	for _, p := range pkgs {
		mod := repo
		for d := filepath.Dir(filepath.Join(repo, filepath.FromSlash(p))); d != filepath.Clean(repo) && d != "." && d != string(os.PathSeparator); d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				mod = d
				break
			}
		}
		rel, _ := filepath.Rel(mod, filepath.Join(repo, filepath.FromSlash(p)))
		i := slices.IndexFunc(out, func(m module) bool { return m.dir == mod })
		if i < 0 {
			out, i = append(out, module{dir: mod}), len(out)
		}
		out[i].pkgs = append(out[i].pkgs, "./"+filepath.ToSlash(rel))
	}
	if len(out[0].pkgs) == 0 {
		out = out[1:]
	}
	return out
}
