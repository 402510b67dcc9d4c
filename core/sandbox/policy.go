package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/core/internal/realpath"
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

// SpecFor is what the process l describes, of the agent c configures, may see: the mount
// rows of Table, each row's paths in its list, and the chat's own claude state in the
// place of claude's config directory.
func SpecFor(c Policy, l Launch) Spec {
	st := startOf(c, l)
	s := Spec{workspace: c.Workspace, worktree: l.Worktree}
	lists := map[int]*[]string{opReadOnly: &s.readOnly, opBind: &s.rw, opScratch: &s.scratch, opHide: &s.hide}
	for _, r := range Table {
		if r.paths != nil {
			*lists[r.op] = append(*lists[r.op], r.paths(st)...)
		}
	}
	if st.configDir != "" {
		s.overlays = append(s.overlays, overlay{l.ChatState, st.configDir})
	}
	return s
}

// start is what Table's rows read of one start: the agent's policy, the start's launch,
// and what follows from its environment.
type start struct {
	c   Policy
	l   Launch
	env []string // l.Env, claude's own HOME last when it runs as another user
	// claudeRW and claudeHide are claude's own state directories and the operator's
	// (claudeDirs); configDir is claude's config directory when the chat's own claude
	// state takes its place ("" otherwise).
	claudeRW, claudeHide []string
	configDir            string
}

func startOf(c Policy, l Launch) start {
	st := start{c: c, l: l, env: l.Env}
	if c.RunAs {
		// claude runs as another user: the operator's own files are that user's to
		// be refused (their home is not theirs), and bubblewrap, run as that user,
		// could not make a mount point inside it. claude's own HOME is the last.
		st.env = append([]string{"HOME=" + lookupEnv(l.Env, "HOME")}, slices.DeleteFunc(slices.Clone(l.Env), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })...)
	}
	st.claudeRW, st.claudeHide = claudeDirs(st.env)
	if dir := lookupEnv(l.Env, "CLAUDE_CONFIG_DIR"); dir != "" && l.ChatState != "" {
		st.configDir = filepath.Clean(dir)
		st.claudeRW = slices.DeleteFunc(st.claudeRW, func(p string) bool { return p == st.configDir })
	}
	return st
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
