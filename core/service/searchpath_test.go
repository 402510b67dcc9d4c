package service

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestSearchPath: the directory of each program found comes first (not
// resolved through links), then that of the interpreter an env script
// names, then the system's directories in their order; what is not found
// is reported.
func TestSearchPath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		sdktest.WriteExecutable(t, p, []byte(content), 0o755)
		return p
	}
	npm := write("npm/lib/claude-code/cli.js", "#!/usr/bin/env node\nconsole.log(1)\n")
	if err := os.MkdirAll(filepath.Join(root, "npm/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(npm, filepath.Join(root, "npm/bin/claude")); err != nil {
		t.Fatal(err)
	}
	node := write("nvm/v22/bin/node", "\x7fELF")
	split := write("other/claude2", "#!/usr/bin/env -S deno run --allow-all\n")
	native := write("native/claude3", "\x7fELF\x02\x01")
	found := map[string]string{
		"claude":  filepath.Join(root, "npm/bin/claude"),
		"node":    node,
		"claude3": native,
		"bwrap":   "/usr/bin/bwrap",
	}
	look := func(p string) (string, error) {
		if filepath.IsAbs(p) {
			return p, nil
		}
		if f, ok := found[p]; ok {
			return f, nil
		}
		return "", errors.New("not found")
	}
	path, missing := SearchPath([]string{"claude", split, "claude3", "bwrap", "ghost"}, look, "linux")
	want := append([]string{filepath.Join(root, "npm/bin"), filepath.Join(root, "nvm/v22/bin"), filepath.Join(root, "other"), filepath.Join(root, "native")}, SystemPath("linux")...)
	if !slices.Equal(path, want) {
		t.Errorf("PATH\n  %q\nwant\n  %q", path, want)
	}
	if !slices.Equal(missing, []string{"deno", "ghost"}) {
		t.Errorf("missing %q, want deno (the interpreter of claude2) and ghost", missing)
	}
}

// TestEnvInterpreter: what a script's #! line runs through env.
func TestEnvInterpreter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ first, want string }{
		{"#!/usr/bin/env node", "node"},
		{"#!/usr/bin/env -S node --no-warnings", "node"},
		{"#!/bin/env FOO=1 python3", "python3"},
		{"#!/usr/bin/node", ""},
		{"\x7fELF", ""},
		{"", ""},
	} {
		p := filepath.Join(dir, "s")
		sdktest.WriteExecutable(t, p, []byte(tc.first+"\nrest\n"), 0o755)
		if got := envInterpreter(p); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.first, got, tc.want)
		}
	}
	if got := envInterpreter(filepath.Join(dir, "none")); got != "" {
		t.Errorf("a missing file: %q", got)
	}
}
