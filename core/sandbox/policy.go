package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/realpath"
	"github.com/clawhost/clawhost/sdk/safegit"
)

// Sandbox modes (agent.sandbox; the runner's Config.Sandbox).
const (
	// Auto runs claude under bubblewrap when bwrap is installed and a probe run
	// succeeds, else without a sandbox (Probe says why).
	Auto = "auto"
	// Off runs claude without a sandbox.
	Off = "off"
)

// Modes are the values agent.sandbox accepts.
var Modes = []string{Auto, Off}

// Spec is what one claude process may see, as lists of paths; the
// policy (which paths, and why) is SpecFor's, the mechanics
// bwrapArgs'. docs/security.md lists the result for each shape of turn.
type Spec struct {
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

// Policy is what an agent's configuration says of its sandbox: the workspace, the
// directories it adds (agent.add_dirs), the paths it hides (agent.hide, the host's
// data and configuration directories) and binds back (agent.expose), its MCP config
// files, and whether claude runs as another user (agent.run_as).
type Policy struct {
	Workspace                        string
	AddDirs, Expose, Hide, MCPConfig []string
	RunAs                            bool
}

// Launch is what one process start adds to its agent's Policy: its TMPDIR and
// environment, the chat's media directory (under <workspace>/media) and worktree, the
// MCP config file naming its tool token, the claude executable and the chat's own
// claude state directory ("" for none).
type Launch struct {
	Tmp       string
	Env       []string
	Media     string
	Worktree  string
	MCP       string
	Exe       string
	ChatState string
}

// SpecFor is what the process l describes, of the agent c configures, may see: the list
// docs/security.md ("What a sandboxed claude sees") writes down.
func SpecFor(c Policy, l Launch) Spec {
	env := l.Env
	if c.RunAs {
		// claude runs as another user: the operator's own files are that user's to
		// be refused (their home is not theirs), and bubblewrap, run as that user,
		// could not make a mount point inside it. claude's own HOME is the last.
		env = append([]string{"HOME=" + lookupEnv(env, "HOME")}, slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })...)
	}
	rw, hide := claudeDirs(env)
	tmps, keep := systemTempDirs()
	s := Spec{workspace: c.Workspace, worktree: l.Worktree,
		rw:       append([]string{l.Tmp}, c.AddDirs...),
		readOnly: slices.Concat(confine.SystemGrants(), keep, c.Expose, executableDirs(l.Exe)),
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
	for _, m := range append([]string{l.MCP}, c.MCPConfig...) {
		if MCPFile(m) && filepath.IsAbs(m) {
			s.readOnly = append(s.readOnly, m)
		}
	}
	// claude's state: the chat's own directory in the place of the
	// config directory, the login and the operator's settings read-only.
	if dir := lookupEnv(l.Env, "CLAUDE_CONFIG_DIR"); dir != "" && l.ChatState != "" {
		dir = filepath.Clean(dir)
		rw = slices.DeleteFunc(rw, func(p string) bool { return p == dir })
		s.overlays = append(s.overlays, overlay{l.ChatState, dir})
		for _, f := range claudeShared {
			s.readOnly = append(s.readOnly, filepath.Join(dir, f))
		}
	}
	s.rw = append(s.rw, rw...)
	ws := c.Workspace
	s.readOnly = append(s.readOnly, filepath.Join(ws, ".claude"))
	if l.Worktree == "" {
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
		s.readOnly = append(s.readOnly, ws, filepath.Join(l.Worktree, ".git"), filepath.Join(l.Worktree, ".claude"))
		s.hide = append(s.hide, filepath.Dir(l.Worktree))
		s.rw = append(s.rw, l.Worktree)
		git := filepath.Join(ws, ".git")
		s.rw = append(s.rw, filepath.Join(git, "objects"), filepath.Join(git, "refs", "heads", BranchDir), filepath.Join(git, "logs", "refs", "heads", BranchDir))
		if admin := safegit.WorktreeAdmin(ws, l.Worktree); admin != "" {
			s.rw = append(s.rw, admin)
			for _, f := range worktreePointers {
				s.readOnly = append(s.readOnly, filepath.Join(admin, f))
			}
		}
	}
	s.hide = append(s.hide, filepath.Join(ws, "media"))
	if l.Media != "" {
		s.rw = append(s.rw, filepath.Join(ws, "media", l.Media))
	}
	return s
}

// MCPFile reports whether m, an --mcp-config value, names a file (not a
// JSON string).
func MCPFile(m string) bool {
	m = strings.TrimSpace(m)
	return m != "" && !strings.HasPrefix(m, "{")
}

// BranchDir is the directory of the chats' branches under refs/heads
// (core/worktree.BranchPrefix without its slash).
const BranchDir = "clawhost"

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
	if real := realpath.Of(exe); real != "" {
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
