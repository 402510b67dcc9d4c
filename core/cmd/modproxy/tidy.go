package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// moduleEnv is the go command's environment for resolving the workspace's
// modules from the proxy at proxy instead of the directories: no workspace,
// no checksum database for them (their sums change with every edit; a
// `go install …@version` checks the released ones against it), the
// machine's module cache as the next proxy (so nothing is downloaded that
// is already there), and modcache as the module cache (the proxy's modules
// are not the released ones: they must not land in the machine's cache).
func moduleEnv(ctx context.Context, proxy, modcache string, mods []workModule) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("go env: unexpected output %q", out)
	}
	proxies := []string{"file://" + filepath.ToSlash(proxy), "file://" + filepath.ToSlash(filepath.Join(lines[0], "cache", "download"))}
	if lines[1] != "" && lines[1] != "off" {
		proxies = append(proxies, lines[1])
	}
	paths := make([]string, len(mods))
	for i, m := range mods {
		paths[i] = m.path
	}
	return append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw",
		"GOTOOLCHAIN=local",
		"GONOSUMDB="+strings.Join(paths, ","),
		"GOPROXY="+strings.Join(proxies, ","),
		"GOMODCACHE="+modcache,
		// The tree's modules are zipped anew at the same versions: the go
		// command's module index (in the shared build cache) would answer
		// from an older zip at the same path ("does not contain package").
		"GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",goindex=0", ","),
	), nil
}

// tidyModule runs `go mod tidy` on the module m against the proxy (env is
// moduleEnv's) into a scratch copy of its go.mod and go.sum, and leaves the
// workspace's own modules out of the new go.sum. With check it only
// reports: it writes the lines that differ to w and returns false when
// anything does. Otherwise it writes the new go.mod and go.sum in place.
func tidyModule(ctx context.Context, m workModule, own []workModule, env []string, check bool, w io.Writer) (bool, error) {
	scratch, err := os.MkdirTemp("", "modproxy-tidy-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(scratch)
	cur := map[string][]byte{}
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(m.dir, f))
		if err != nil && !os.IsNotExist(err) {
			return false, err
		}
		cur[f] = data
		if err := os.WriteFile(filepath.Join(scratch, f), data, 0o644); err != nil {
			return false, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "tidy", "-modfile="+filepath.Join(scratch, "go.mod"))
	cmd.Dir, cmd.Env = m.dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("go mod tidy in %s: %w\n%s", m.dir, err, out)
	}
	clean := true
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(scratch, f))
		if err != nil && !os.IsNotExist(err) {
			return false, err
		}
		if f == "go.sum" {
			data = withoutOwnSums(data, own)
		}
		if bytes.Equal(data, cur[f]) {
			continue
		}
		clean = false
		if check {
			writeLineDiff(w, filepath.Join(m.dir, f), cur[f], data)
		} else if err := os.WriteFile(filepath.Join(m.dir, f), data, 0o644); err != nil {
			return false, err
		}
	}
	return clean, nil
}

// withoutOwnSums drops the go.sum lines of the workspace's own modules.
func withoutOwnSums(sum []byte, own []workModule) []byte {
	var b bytes.Buffer
	for line := range strings.SplitAfterSeq(string(sum), "\n") {
		path, _, _ := strings.Cut(line, " ")
		if line == "" || slices.ContainsFunc(own, func(m workModule) bool { return m.path == path }) {
			continue
		}
		b.WriteString(line)
	}
	return b.Bytes()
}

// writeLineDiff writes the lines only in have ("-") and only in want ("+").
func writeLineDiff(w io.Writer, name string, have, want []byte) {
	hl, wl := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	fmt.Fprintf(w, "%s is not tidy:\n", name)
	for _, l := range hl {
		if !slices.Contains(wl, l) {
			fmt.Fprintf(w, "-%s\n", l)
		}
	}
	for _, l := range wl {
		if !slices.Contains(hl, l) {
			fmt.Fprintf(w, "+%s\n", l)
		}
	}
}
