package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sandbox modes (Config.Sandbox, agent.sandbox).
const (
	// SandboxAuto runs claude under bubblewrap when bwrap is installed and
	// a probe run succeeds, else without a sandbox (Runner.Sandbox says
	// why, and New logs a warning).
	SandboxAuto = "auto"
	// SandboxOff runs claude without a sandbox.
	SandboxOff = "off"
)

// SandboxModes are the values Config.Sandbox accepts.
var SandboxModes = []string{SandboxAuto, SandboxOff}

// bwrapCommand is bubblewrap's executable, looked up in PATH.
const bwrapCommand = "bwrap"

// probeTimeout bounds the probe run of bwrap at New.
const probeTimeout = 10 * time.Second

// sandbox is what New found out about the sandbox: the bwrap path when
// claude runs in one, and the sentence Runner.Sandbox returns.
type sandbox struct {
	bwrap string // "" without a sandbox
	state string
}

// probeSandbox decides the sandbox for cfg: with SandboxAuto, bwrap from
// PATH and one run of it with the namespaces claude's sandbox uses (as the
// user claude runs as), so a kernel or container that forbids them is found
// here, not on the first turn.
func probeSandbox(cfg Config) sandbox {
	if cfg.Sandbox == SandboxOff {
		return sandbox{state: "off"}
	}
	path, err := exec.LookPath(bwrapCommand)
	if err != nil {
		return sandbox{state: "unavailable (bubblewrap not installed)"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.SysProcAttr = credentialAttr(cfg.RunAs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return sandbox{state: "unavailable (bubblewrap failed: " + truncate(why, 200) + ")"}
	}
	return sandbox{bwrap: path, state: "bubblewrap"}
}

// sandboxSpec is what one claude process may see.
type sandboxSpec struct {
	// workspace, tmpdir and rw are writable (rw: the claude config
	// directory, Config.AddDirs).
	workspace, tmpdir string
	rw                []string
	// readOnly are writable paths made read-only again: the workspace's
	// .claude (the project settings, which claude must not rewrite for its
	// next start).
	readOnly []string
	// hide are paths made invisible: an empty directory, or an empty file.
	hide []string
	// mediaDir is the one directory under <workspace>/media left visible;
	// "" hides all of <workspace>/media.
	mediaDir string
	// worktree, when set, is the chat's own git worktree inside the
	// workspace (TurnRequest.Dir): claude works there, and the other
	// chats' worktrees beside it are hidden.
	worktree string
}

// mount is one bwrap mount step.
type mount struct {
	path string
	op   int // opHide, opBind or opReadOnly, the order at one path
}

const (
	opHide = iota
	opBind
	opReadOnly
)

// bwrapArgs is bwrap's argv (without the command) for s, up to and
// including "--". The whole filesystem is mounted read-only, then each path
// is hidden or bound writable in order of depth, so the deeper rule wins: a
// directory bound back inside a hidden one (the TMPDIR and claude config
// directory inside data_dir) is visible, a hidden one inside the workspace
// (other chats' media) is not. stat tells directories from files and
// reports what does not exist, which is skipped (bwrap cannot mount over a
// missing path on a read-only tree).
func bwrapArgs(s sandboxSpec, stat func(string) (dir, ok bool)) []string {
	a := []string{"--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	var ms []mount
	add := func(p string, op int) {
		if p != "" {
			ms = append(ms, mount{filepath.Clean(p), op})
		}
	}
	add(s.workspace, opBind)
	add(s.tmpdir, opBind)
	for _, p := range s.rw {
		add(p, opBind)
	}
	for _, p := range s.readOnly {
		add(p, opReadOnly)
	}
	for _, p := range s.hide {
		add(p, opHide)
	}
	if s.worktree != "" {
		add(filepath.Dir(s.worktree), opHide)
		add(s.worktree, opBind)
	}
	if s.workspace != "" {
		add(filepath.Join(s.workspace, "media"), opHide)
		if s.mediaDir != "" {
			add(filepath.Join(s.workspace, "media", s.mediaDir), opBind)
		}
	}
	slices.SortStableFunc(ms, func(x, y mount) int {
		if d := depth(x.path) - depth(y.path); d != 0 {
			return d
		}
		if c := strings.Compare(x.path, y.path); c != 0 {
			return c
		}
		return x.op - y.op
	})
	ms = slices.Compact(ms)
	for _, m := range ms {
		dir, ok := stat(m.path)
		if !ok {
			continue
		}
		switch {
		case m.op == opBind:
			a = append(a, "--bind", m.path, m.path)
		case m.op == opReadOnly:
			a = append(a, "--ro-bind", m.path, m.path)
		case dir:
			a = append(a, "--tmpfs", m.path)
		default:
			a = append(a, "--ro-bind", "/dev/null", m.path)
		}
	}
	return append(a, "--chdir", cmp.Or(s.worktree, s.workspace), "--")
}

// depth is the number of elements of a clean absolute path.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// statPath is bwrapArgs' stat on the real filesystem.
func statPath(p string) (dir, ok bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, false
	}
	return fi.IsDir(), true
}

// claudeDirs are the paths claude keeps its own state in, read from the
// environment it gets: the writable ones and the operator's to hide. With
// CLAUDE_CONFIG_DIR set (the bot's own directory, or one agent.env names)
// that directory is writable and the operator's ~/.claude and
// ~/.claude.json are hidden. Without it (agent.settings = "user") claude
// uses those two, and replaces ~/.claude.json by writing a new file next
// to it, so the whole home directory stays writable.
func claudeDirs(env []string) (rw, hide []string) {
	home, dir := lookupEnv(env, "HOME"), lookupEnv(env, "CLAUDE_CONFIG_DIR")
	var personal []string
	if home != "" {
		personal = []string{filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json")}
	}
	if dir == "" {
		if home == "" {
			return nil, nil
		}
		return []string{home}, nil
	}
	dir = filepath.Clean(dir)
	for _, p := range personal {
		if p == dir || strings.HasPrefix(dir, p+string(filepath.Separator)) {
			// The config directory is (inside) the personal one: hiding
			// it would hide claude's own.
			return []string{dir}, nil
		}
	}
	return []string{dir}, personal
}

// lookupEnv is the last value of key in env ("" when absent), as exec uses it.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// sandboxSpecFor is what the process with TMPDIR tmp and environment env
// may see.
func (c Config) sandboxSpecFor(tmp string, env []string, mediaDir, worktree string) sandboxSpec {
	rw, hide := claudeDirs(env)
	s := sandboxSpec{workspace: c.Workspace, tmpdir: tmp, mediaDir: mediaDir, worktree: worktree,
		rw:       append(append(rw, c.AddDirs...), c.Expose...),
		readOnly: []string{filepath.Join(c.Workspace, ".claude")},
		hide:     append(hide, c.Hide...),
	}
	return s
}

// sandboxed wraps path and args in bwrap when c's agent has a sandbox.
func (r *Runner) sandboxed(c *Config, path string, args []string, tmp string, env []string, mediaDir, worktree string) (string, []string, error) {
	sb := r.sandboxOf(c)
	if sb.bwrap == "" {
		return path, args, nil
	}
	s := c.sandboxSpecFor(tmp, env, mediaDir, worktree)
	if mediaDir != "" {
		// Bound into the sandbox, so it must exist; the host puts the
		// chat's attachments there.
		if err := os.MkdirAll(filepath.Join(c.Workspace, "media", mediaDir), 0o700); err != nil {
			return "", nil, fmt.Errorf("create media directory: %w", err)
		}
	}
	if err := ensureDir(filepath.Join(c.Workspace, ".claude")); err != nil {
		return "", nil, err
	}
	return sb.bwrap, append(append(bwrapArgs(s, statPath), path), args...), nil
}

// shareMedia gives the session's attachments to claude's user
// (agent.run_as): the host downloads them as its own (0700 directories,
// 0600 files), and bubblewrap, started as that user, binds the directory
// in. It runs before every turn, so attachments that came with this turn's
// message are claude's too. The media root stays the host's (0711: that
// user passes through it but cannot replace a session's directory with a
// link), and nothing is changed through a link: a link is skipped, and
// runas.Chown never follows one. Without RunAs or a media directory it does
// nothing.
func (r *Runner) shareMedia(c *Config, mediaDir string) error {
	u := c.RunAs
	if u == nil || mediaDir == "" {
		return nil
	}
	root := filepath.Join(c.Workspace, "media")
	dir := filepath.Join(root, mediaDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create media directory: %w", err)
	}
	if err := os.Chmod(root, 0o711); err != nil {
		return fmt.Errorf("media directory: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("media directory %s is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("media directory: %w", err)
	}
	paths := []string{dir}
	for _, e := range entries {
		if e.Type().IsRegular() {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return u.Chown(paths...)
}

// ensureDir creates the workspace's .claude when missing, so the sandbox
// can make it read-only: else claude could create project settings (allow
// rules, hooks) that its next start would load.
func ensureDir(p string) error {
	if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}

// validMediaDir reports whether d names one directory under
// <workspace>/media: relative, one or more clean elements, no "..".
func validMediaDir(d string) bool {
	if d == "" {
		return true
	}
	c := filepath.Clean(d)
	return c == d && !filepath.IsAbs(d) && c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

// innerPID is the pid of the command bwrap runs, as the host sees it
// (bwrap → its init in the new pid namespace → the command); pid itself
// when it has no such descendant. Status shows the memory of that process.
func innerPID(pid int) int {
	cur := pid
	for range 2 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cur) + "/task/" + strconv.Itoa(cur) + "/children")
		if err != nil {
			return pid
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return pid
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			return pid
		}
		cur = n
	}
	return cur
}
