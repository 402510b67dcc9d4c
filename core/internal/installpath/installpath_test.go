package installpath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes the executable files named (relative to root) and the
// non-executable ones, and returns root.
func tree(t *testing.T, exec []string, plain ...string) string {
	t.Helper()
	root := t.TempDir()
	for i, list := range [][]string{exec, plain} {
		for _, f := range list {
			p := filepath.Join(root, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			mode := os.FileMode(0o755)
			if i == 1 {
				mode = 0o644
			}
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestFindClaude: PATH first, then next to clawhost, claude's native
// installer, its local install, the checkout's make claude-cli, npm's
// global bins; a file without an execute bit is passed over; a command
// other than claude is looked for in PATH only.
func TestFindClaude(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		exec    []string // executable files under the root
		plain   []string // files without the execute bit
		command string
		env     map[string]string // values with "$R" replaced by the root
		want    string            // path under the root, "" for not found
		where   string
	}{
		{"PATH first", []string{"usr/bin/claude", "home/.local/bin/claude"}, nil, "claude",
			map[string]string{"PATH": "$R/nope:$R/usr/bin", "HOME": "$R/home"}, "usr/bin/claude", "PATH"},
		{"next to clawhost", []string{"co/bin/claude", "home/.local/bin/claude"}, nil, "claude",
			map[string]string{"PATH": "$R/usr/bin", "HOME": "$R/home"}, "co/bin/claude", "next to clawhost"},
		{"native installer", []string{"home/.local/bin/claude", "home/.claude/local/claude"}, nil, "claude",
			map[string]string{"HOME": "$R/home"}, "home/.local/bin/claude", "~/.local/bin (claude's native installer)"},
		{"local install", []string{"home/.claude/local/claude"}, []string{"home/.local/bin/claude"}, "claude",
			map[string]string{"HOME": "$R/home"}, "home/.claude/local/claude", "~/.claude/local (claude's local install)"},
		{"the checkout's make claude-cli", []string{"co/.cache/claude-cli/node_modules/.bin/claude"}, nil, "claude",
			map[string]string{"HOME": "$R/home"}, "co/.cache/claude-cli/node_modules/.bin/claude", "the checkout's .cache/claude-cli (make claude-cli)"},
		{"npm prefix", []string{"npm/bin/claude", "home/.npm-global/bin/claude"}, nil, "claude",
			map[string]string{"HOME": "$R/home", "NPM_CONFIG_PREFIX": "$R/npm"}, "npm/bin/claude", "npm's global bin ($NPM_CONFIG_PREFIX)"},
		{"npm-global", []string{"home/.npm-global/bin/claude", "sys/bin/claude"}, nil, "claude",
			map[string]string{"HOME": "$R/home"}, "home/.npm-global/bin/claude", "npm's global bin (~/.npm-global)"},
		{"npm's system bin", []string{"sys/bin/claude"}, nil, "claude",
			nil, "sys/bin/claude", "npm's global bin ($R/sys/bin)"},
		{"a relative PATH entry is not looked in", nil, []string{"x"}, "claude",
			map[string]string{"PATH": "."}, "", ""},
		{"not claude: PATH only", []string{"home/.local/bin/claude-beta"}, nil, "claude-beta",
			map[string]string{"HOME": "$R/home"}, "", ""},
		{"nowhere", nil, []string{"usr/bin/claude"}, "claude",
			map[string]string{"PATH": "$R/usr/bin", "HOME": "$R/home"}, "", ""},
		{"a path", []string{"opt/claude"}, nil, "$R/opt/claude", nil, "opt/claude", "agent.command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := tree(t, tc.exec, tc.plain...)
			sub := func(s string) string { return strings.ReplaceAll(s, "$R", root) }
			m := Machine{
				LookupEnv: func(k string) (string, bool) { v, ok := tc.env[k]; return sub(v), ok },
				ExeDir:    filepath.Join(root, "co", "bin"),
				NPMBins:   []string{filepath.Join(root, "sys", "bin")},
			}
			f, err := m.Find(sub(tc.command))
			if tc.want == "" {
				if err == nil {
					t.Fatalf("found %+v", f)
				}
				if tc.command == Claude && !strings.Contains(err.Error(), filepath.Join(root, "home", ".local", "bin", "claude")) && tc.env["HOME"] != "" {
					t.Errorf("the error does not name the places looked at: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Path != filepath.Join(root, tc.want) || f.Where != sub(tc.where) {
				t.Errorf("found %s (%s), want %s (%s)", f.Path, f.Where, filepath.Join(root, tc.want), sub(tc.where))
			}
		})
	}
}

// TestExecutableDir: the test binary's own directory, symlinks resolved.
func TestExecutableDir(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got := ExecutableDir(); got != filepath.Dir(real) {
		t.Fatalf("ExecutableDir() = %q, want %q", got, filepath.Dir(real))
	}
}

// TestCurrent: a release directory is named through install.sh's link
// when the link leads to it; otherwise it stays as it is.
func TestCurrent(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	for _, d := range []string{"clawhost-0.1.0", "clawhost-0.2.0", "bin"} {
		if err := os.Mkdir(filepath.Join(lib, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("clawhost-0.2.0", filepath.Join(lib, CurrentLink)); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	if err := os.Mkdir(filepath.Join(plain, "clawhost-0.2.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(plain, CurrentLink), 0o755); err != nil { // a directory, not install.sh's link
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir, want string
	}{
		{"the current release", filepath.Join(lib, "clawhost-0.2.0"), filepath.Join(lib, CurrentLink)},
		{"an older release", filepath.Join(lib, "clawhost-0.1.0"), filepath.Join(lib, "clawhost-0.1.0")},
		{"not a release", filepath.Join(lib, "bin"), filepath.Join(lib, "bin")},
		{"no link beside it", filepath.Join(plain, "clawhost-0.2.0"), filepath.Join(plain, "clawhost-0.2.0")},
	} {
		if got := Current(c.dir); got != c.want {
			t.Errorf("%s: Current(%s) = %s, want %s", c.name, c.dir, got, c.want)
		}
	}
}
