// Package installpath finds what clawhost runs that is installed beside it
// rather than named by a full path: the directory of its own executable
// (the default plugin_dir: a release archive's plugins and make build's
// bin/ sit next to clawhost) and the claude CLI when agent.command is the
// bare name "claude" — on PATH first, then in the places claude's
// installers put it, so clawhost finds the same CLI with or without make
// run's PATH and under a service manager's short PATH.
package installpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Claude is the bare command name the extra places apply to; any other
// agent.command is looked up as exec.LookPath would.
const Claude = "claude"

// ExecutableDir is the directory of the running executable with symlinks
// resolved (a clawhost linked into /usr/local/bin still finds the plugins
// beside its real file), or "" when the system cannot say.
func ExecutableDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// CurrentLink is the name install.sh gives the link to the release it
// installed last, beside the release directories: PREFIX/lib/clawhost ->
// clawhost-VERSION.
const CurrentLink = "clawhost"

// Current is dir (a directory of an installed release) as the path
// through install.sh's link to the current release, when that link
// leads to dir: what a configuration or a service unit should name, so
// that the next install.sh, which moves the link, moves them to the new
// release's clawhost and plugins too. Any other dir is returned as it is
// (make build's bin/, an unpacked archive).
func Current(dir string) string {
	if !strings.HasPrefix(filepath.Base(dir), CurrentLink+"-") {
		return dir
	}
	link := filepath.Join(filepath.Dir(dir), CurrentLink)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return dir
	}
	to, err := filepath.EvalSymlinks(link)
	if err != nil {
		return dir
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || real != to {
		return dir
	}
	return link
}

// Release is the version of the release directory install.sh put the
// file at path in (PREFIX/lib/clawhost-VERSION), symlinks resolved; ""
// when it is in no such directory (make build's bin/, an unpacked
// archive, a plugin of one's own).
func Release(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	v, ok := strings.CutPrefix(filepath.Base(filepath.Dir(path)), CurrentLink+"-")
	if !ok {
		return ""
	}
	return v
}

// OtherRelease reports whether the plugin binary at plugin is in another
// install.sh release directory than the clawhost at self, with both
// releases: an upgrade left plugin_dir naming the old release. Files
// outside release directories (make build's bin/, an unpacked archive,
// one's own plugins) are never of another release.
func OtherRelease(self, plugin string) (mine, theirs string, other bool) {
	mine, theirs = Release(self), Release(plugin)
	return mine, theirs, mine != "" && theirs != "" && mine != theirs
}

// Found is a command found: its absolute path and where it was found, in
// words for the log and clawhost doctor ("PATH", "~/.local/bin (claude's
// native installer)").
type Found struct {
	Path  string
	Where string
}

// Place is one well-known place of the claude CLI.
type Place struct {
	// Path is the file looked at.
	Path string
	// Where says what puts a claude there.
	Where string
}

// Machine is what a lookup reads of the machine: the environment (PATH,
// HOME, NPM_CONFIG_PREFIX), the executable's directory, and the system
// directories npm's global installs go to.
type Machine struct {
	LookupEnv func(string) (string, bool)
	ExeDir    string
	// NPMBins are npm's usual global bin directories, after the
	// environment's: /usr/local/bin (npm's default prefix, Debian's) and
	// /opt/homebrew/bin (Homebrew's node on Apple silicon).
	NPMBins []string
}

// System is this process's machine.
func System() Machine {
	return Machine{LookupEnv: os.LookupEnv, ExeDir: ExecutableDir(), NPMBins: []string{"/usr/local/bin", "/opt/homebrew/bin"}}
}

// FindCommand finds command on this machine; see Machine.Find.
func FindCommand(command string) (Found, error) { return System().Find(command) }

func (m Machine) env(name string) string {
	if m.LookupEnv == nil {
		return ""
	}
	v, _ := m.LookupEnv(name)
	return v
}

// Places are where claude is looked for after PATH, in order: next to
// clawhost; ~/.local/bin/claude (claude's native installer, curl
// https://claude.ai/install.sh); ~/.claude/local/claude (claude's own
// migrate-installer); the checkout's .cache/claude-cli (make claude-cli),
// found from bin/clawhost; npm's global bin ($NPM_CONFIG_PREFIX/bin,
// ~/.npm-global/bin, then NPMBins), which a service manager's PATH may
// leave out. npm itself is not run (a node
// start for each lookup).
func (m Machine) Places() []Place {
	var out []Place
	if m.ExeDir != "" {
		out = append(out, Place{filepath.Join(m.ExeDir, Claude), "next to clawhost"})
	}
	if home := m.env("HOME"); home != "" {
		out = append(out,
			Place{filepath.Join(home, ".local", "bin", Claude), "~/.local/bin (claude's native installer)"},
			Place{filepath.Join(home, ".claude", "local", Claude), "~/.claude/local (claude's local install)"})
	}
	if m.ExeDir != "" {
		out = append(out, Place{filepath.Join(filepath.Dir(m.ExeDir), ".cache", "claude-cli", "node_modules", ".bin", Claude), "the checkout's .cache/claude-cli (make claude-cli)"})
	}
	if p := m.env("NPM_CONFIG_PREFIX"); p != "" {
		out = append(out, Place{filepath.Join(p, "bin", Claude), "npm's global bin ($NPM_CONFIG_PREFIX)"})
	}
	if home := m.env("HOME"); home != "" {
		out = append(out, Place{filepath.Join(home, ".npm-global", "bin", Claude), "npm's global bin (~/.npm-global)"})
	}
	for _, d := range m.NPMBins {
		out = append(out, Place{filepath.Join(d, Claude), "npm's global bin (" + d + ")"})
	}
	return out
}

// Find finds command: a command with a path separator is that file; any
// other is looked for in PATH; the bare name "claude" then in Places. The
// error names every place looked at.
func (m Machine) Find(command string) (Found, error) {
	if strings.ContainsRune(command, filepath.Separator) {
		if err := executable(command); err != nil {
			return Found{}, fmt.Errorf("find %s: %w", command, err)
		}
		abs, err := filepath.Abs(command)
		if err != nil {
			return Found{}, fmt.Errorf("find %s: %w", command, err)
		}
		return Found{Path: abs, Where: "agent.command"}, nil
	}
	path := m.env("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the working directory
		}
		if p := filepath.Join(dir, command); executable(p) == nil {
			return Found{Path: p, Where: "PATH"}, nil
		}
	}
	if command != Claude {
		return Found{}, fmt.Errorf("find %s: not in PATH (%s)", command, path)
	}
	var looked []string
	for _, pl := range m.Places() {
		if executable(pl.Path) == nil {
			return Found{Path: pl.Path, Where: pl.Where}, nil
		}
		looked = append(looked, pl.Path)
	}
	return Found{}, fmt.Errorf("find %s: not in PATH (%s) nor at %s", command, path, strings.Join(looked, ", "))
}

// errNotExecutable is a file that is there but not executable.
var errNotExecutable = errors.New("not an executable file")

// executable reports whether path is a regular file with an execute bit.
func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return errNotExecutable
	}
	return nil
}
