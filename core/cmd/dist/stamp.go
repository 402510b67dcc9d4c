package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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

// goBuild builds pkgs (main packages of the module at repo) for t into
// dir, one executable each, named for the package's directory. Static
// (CGO_ENABLED=0: the SQLite driver is pure Go), -trimpath (no paths of
// this machine), grpcnotrace (as make build; see the Makefile).
func goBuild(ctx context.Context, repo string, t platform, st stamp, dir string, pkgs []string) error {
	args := append([]string{"build", "-trimpath", "-tags", "grpcnotrace", "-ldflags", ldflags(st), "-o", dir + string(os.PathSeparator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, stderr.String())
	}
	return nil
}
