package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/sdk/safegit"
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

// sandbox is what New found out about the sandbox: the bwrap path when
// claude runs in one, and the sentence Runner.Sandbox returns.
type sandbox struct {
	bwrap string // "" without a sandbox
	state string
	// helper is how the sandbox is made where New tried recycled sandboxes (ZygoteEnv):
	// "recycled" (one of the agent's recycled sandboxes, zygotepool_linux.go) or "per
	// start" (the helper could not run, or ZygoteEnv=0: bubblewrap per start); "" where it
	// did not (a binary that is no helper).
	helper string
}

// sandboxSpec is what one claude process may see, as lists of paths; the
// policy (which paths, and why) is sandboxSpecFor's, the mechanics
// bwrapArgs'. docs/security.md lists the result for each shape of turn.
type sandboxSpec struct {
	// workspace is where claude works unless worktree is set.
	workspace string
	// worktree, when set, is the chat's own git worktree inside the
	// workspace (TurnRequest.Dir): claude works there.
	worktree string
	// rw are bound writable; readOnly bound read-only (inside a hidden
	// tree: visible again; inside a writable one: read-only again).
	rw, readOnly []string
	// hide are made invisible inside what is shown: an empty directory, or an
	// empty file (outside it they do not exist: nothing is mounted there).
	hide []string
	// scratch are fresh, empty, writable directories of the sandbox's own
	// (/tmp, /var/tmp, claude's HOME when none is bound).
	scratch []string
	// overlays put one directory in the place of another: a chat's own
	// claude state at claude's config directory.
	overlays []overlay
}

// overlay binds src writable at dst.
type overlay struct{ src, dst string }

// claudeDirs are the paths claude keeps its own state in, read from the
// environment it gets: the writable ones and the operator's to hide. With
// CLAUDE_CONFIG_DIR set (the bot's own directory, or one agent.env names)
// that directory is writable and the operator's ~/.claude and
// ~/.claude.json are hidden. Without it (agent.settings = "user") claude
// uses those two, and replaces ~/.claude.json by writing a new file next
// to it, so the whole home directory stays writable.
//
// The environment may name HOME more than once — the host's (the
// operator's), then run_as's or agent.env's — and claude gets the last:
// the .claude of every HOME named is hidden, not only of claude's own
// (with agent.env setting HOME, a tool read the operator's ~/.claude.json,
// TestSandboxHidesTheOperatorsClaude).
func claudeDirs(env []string) (rw, hide []string) {
	home, dir := lookupEnv(env, "HOME"), lookupEnv(env, "CLAUDE_CONFIG_DIR")
	var personal []string
	for _, h := range lookupEnvAll(env, "HOME") {
		if dir == "" && h == home {
			continue // claude's own, below
		}
		for _, p := range []string{filepath.Join(h, ".claude"), filepath.Join(h, ".claude.json")} {
			if !slices.Contains(personal, p) {
				personal = append(personal, p)
			}
		}
	}
	if dir == "" {
		if home == "" {
			return nil, personal
		}
		return []string{home}, without(personal, home)
	}
	dir = filepath.Clean(dir)
	for _, p := range personal {
		if p == dir || strings.HasPrefix(dir, p+string(filepath.Separator)) {
			// The config directory is (inside) a personal one: hiding
			// it would hide claude's own; that home's pair stays shown.
			h := filepath.Dir(p)
			return []string{dir}, without(without(personal, filepath.Join(h, ".claude")), filepath.Join(h, ".claude.json"))
		}
	}
	return []string{dir}, personal
}

// without is paths less p and what p holds or is held in (hiding either
// would hide p).
func without(paths []string, p string) []string {
	var out []string
	for _, q := range paths {
		if q == p || strings.HasPrefix(q, p+string(filepath.Separator)) || strings.HasPrefix(p, q+string(filepath.Separator)) {
			continue
		}
		out = append(out, q)
	}
	return out
}

// lookupEnvAll is every value of key in env, in order.
func lookupEnvAll(env []string, key string) []string {
	var out []string
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key && v != "" {
			out = append(out, v)
		}
	}
	return out
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

// systemTempDirs are the shared temporary and runtime directories hidden
// wherever a granted tree holds them: the host's plugin sockets live in its
// TMPDIR, and /run and /dev/shm hold other services' sockets and shared memory.
// /run/systemd/resolve is bound back (/etc/resolv.conf may point there).
// Resolved once: they do not move while the host runs.
var systemTempDirs = sync.OnceValues(func() (hide, keep []string) {
	for _, d := range []string{"/dev/shm", "/run", os.TempDir()} {
		// A link (/var/run → /run) is mounted over where it leads.
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if d = filepath.Clean(d); d != "/" && !slices.Contains(hide, d) {
			hide = append(hide, d)
		}
	}
	return hide, []string{"/run/systemd/resolve"}
})

// claudeShared are the files and directories of claude's config directory
// every chat's claude reads and none may write: the login, the user-level
// settings, memory, agents, commands and skills the operator put there.
var claudeShared = []string{".credentials.json", "settings.json", "CLAUDE.md", "agents", "commands", "skills", "output-styles"}

// sandboxLaunch is what one process start adds to its agent's Config for
// the sandbox: its TMPDIR and environment, the chat's media directory and
// worktree, the MCP config file naming its tool token, the claude
// executable and the chat's own claude state directory ("" for none).
type sandboxLaunch struct {
	tmp       string
	env       []string
	media     string
	worktree  string
	mcp       string
	exe       string
	chatState string
	// sessionID and resume: the session the process starts or resumes
	// (a resumed transcript may still be in the shared directory).
	sessionID string
	resume    bool
	// prep is the sandbox's preparation begun early (prepareEarly); nil: made when used.
	prep *preparing
}

// sandboxSpecFor is what the process l describes may see: the list
// docs/security.md ("What a sandboxed claude sees") writes down.
func (c Config) sandboxSpecFor(l sandboxLaunch) sandboxSpec {
	env := l.env
	if c.RunAs != nil {
		// claude runs as another user: the operator's own files are that user's to
		// be refused (their home is not theirs), and bubblewrap, run as that user,
		// could not make a mount point inside it. claude's own HOME is the last.
		env = append([]string{"HOME=" + lookupEnv(env, "HOME")}, slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })...)
	}
	rw, hide := claudeDirs(env)
	tmps, keep := systemTempDirs()
	s := sandboxSpec{workspace: c.Workspace, worktree: l.worktree,
		rw:       append([]string{l.tmp}, c.AddDirs...),
		readOnly: slices.Concat(confine.SystemGrants(), keep, c.Expose, executableDirs(l.exe)),
		hide:     append(append(slices.Clone(tmps), hide...), c.Hide...),
		scratch:  slices.Clone(confine.Scratch),
	}
	// claude's HOME: its own when bound (no config directory of its own), else an
	// empty directory of the sandbox's (caches its tools write go nowhere).
	if home := lookupEnv(env, "HOME"); home != "" && !slices.Contains(rw, filepath.Clean(home)) {
		s.scratch = append(s.scratch, filepath.Clean(home))
	}
	// MCP config files: the chat's own (its tool token) and agent.mcp_config's
	// (which may sit in a hidden tree, beside the config file); a relative one
	// is in the workspace, a JSON string no file.
	for _, m := range append([]string{l.mcp}, c.MCPConfig...) {
		if mcpFile(m) && filepath.IsAbs(m) {
			s.readOnly = append(s.readOnly, m)
		}
	}
	// claude's state: the chat's own directory in the place of the
	// config directory, the login and the operator's settings read-only.
	if dir := lookupEnv(l.env, "CLAUDE_CONFIG_DIR"); dir != "" && l.chatState != "" {
		dir = filepath.Clean(dir)
		rw = slices.DeleteFunc(rw, func(p string) bool { return p == dir })
		s.overlays = append(s.overlays, overlay{l.chatState, dir})
		for _, f := range claudeShared {
			s.readOnly = append(s.readOnly, filepath.Join(dir, f))
		}
	}
	s.rw = append(s.rw, rw...)
	ws := c.Workspace
	s.readOnly = append(s.readOnly, filepath.Join(ws, ".claude"))
	if l.worktree == "" {
		s.rw = append(s.rw, ws)
		if sharedRepo(ws) {
			// Other chats work in worktrees of this repository, and the
			// host runs git in it: its .git is no chat's to change.
			s.readOnly = append(s.readOnly, filepath.Join(ws, ".git"))
		}
	} else {
		// The repository's own checkout and .git are shared by every
		// chat: read-only. The chat's worktree is its own, but for its
		// .git pointer and its .claude; of .git it may write what a
		// commit on its branch needs: objects, its branch's ref and log,
		// its worktree's admin directory (not that directory's pointers).
		s.readOnly = append(s.readOnly, ws, filepath.Join(l.worktree, ".git"), filepath.Join(l.worktree, ".claude"))
		s.hide = append(s.hide, filepath.Dir(l.worktree))
		s.rw = append(s.rw, l.worktree)
		git := filepath.Join(ws, ".git")
		s.rw = append(s.rw, filepath.Join(git, "objects"), filepath.Join(git, "refs", "heads", branchDir), filepath.Join(git, "logs", "refs", "heads", branchDir))
		if admin := safegit.WorktreeAdmin(ws, l.worktree); admin != "" {
			s.rw = append(s.rw, admin)
			for _, f := range worktreePointers {
				s.readOnly = append(s.readOnly, filepath.Join(admin, f))
			}
		}
	}
	s.hide = append(s.hide, filepath.Join(ws, "media"))
	if l.media != "" {
		s.rw = append(s.rw, filepath.Join(ws, "media", l.media))
	}
	return s
}

// mcpFile reports whether m, an --mcp-config value, names a file (not a
// JSON string).
func mcpFile(m string) bool {
	m = strings.TrimSpace(m)
	return m != "" && !strings.HasPrefix(m, "{")
}

// branchDir is the directory of the chats' branches under refs/heads
// (core/worktree.BranchPrefix without its slash).
const branchDir = "clawhost"

// worktreePointers are the files of a worktree's admin directory that say
// where its repository and checkout are, and its own config: git run by the
// host or another chat reads them, so no chat may write them.
var worktreePointers = []string{"commondir", "gitdir", "config.worktree"}

// sharedRepo reports whether ws is a repository whose chats work in
// clawhost worktrees (core/worktree.Dir exists).
func sharedRepo(ws string) bool {
	fi, err := os.Stat(filepath.Join(ws, ".clawhost", "worktrees"))
	return err == nil && fi.IsDir()
}

// executableDirs are the directories the claude executable needs, bound
// back read-only in case a hidden tree holds them (the config file's
// directory with make claude-cli's .cache): the package of the path exec
// runs and of the file its links lead to (the nearest node_modules, else
// the file's directory).
func executableDirs(exe string) []string {
	if exe == "" {
		return nil
	}
	// The package as exec names it (a link inside it, ../pkg/bin/x,
	// resolves within it) and as it really is.
	out := []string{packageDir(exe)}
	if real := realPath(exe); real != "" {
		out = append(out, packageDir(real))
	}
	return out
}

// packageDir is the nearest node_modules directory above exe, else exe's
// own directory.
func packageDir(exe string) string {
	for d := filepath.Dir(exe); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			return d
		}
	}
	return filepath.Dir(exe)
}

// seccompFD is the descriptor bwrap per start reads the syscall filter from: the
// first of exec.Cmd.ExtraFiles (spawn).
const seccompFD = 3

// sandboxed wraps path and args in bwrap when c's agent has a sandbox.
func (r *Runner) sandboxed(c *Config, path string, args []string, l sandboxLaunch) (string, []string, error) {
	sb := r.sandboxOf(c)
	if sb.bwrap == "" {
		return path, args, nil
	}
	l.exe = path
	if err := r.prepared(c, l); err != nil {
		return "", nil, err
	}
	argv := append(confine.BubblewrapArgs(seccompFD), bwrapArgs(c.sandboxSpecFor(l), hostPaths)...)
	return sb.bwrap, append(append(argv, path), args...), nil
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

// validMediaDir reports whether d names one directory under
// <workspace>/media: relative, one or more clean elements, no "..".
func validMediaDir(d string) bool {
	if d == "" {
		return true
	}
	c := filepath.Clean(d)
	return c == d && !filepath.IsAbs(d) && c != "." && c != ".." && !strings.HasPrefix(c, "../")
}
