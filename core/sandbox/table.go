package sandbox

import (
	"path/filepath"
	"slices"
	"strconv"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/sdk/safegit"
)

// Row is one row of the sandbox's policy, and of docs/security.md's table "What a
// sandboxed claude sees" (Doc, its name there; TestPolicyTableIsTheDoc holds them
// together). A mount row gives paths for one start (paths) and how each is mounted (op):
// SpecFor reads them, and both launchers mount what it returns. Any other row names the
// kernel's part, and bwrap holds its flags: what PerStart's bubblewrap gets (BwrapArgs);
// the recycled sandbox's helper makes the same namespaces itself (core/sandbox/helper).
type Row struct {
	Doc   string
	op    int
	paths func(start) []string
	bwrap []string
}

// Table is the policy, a row per line of docs/security.md's table, in its order.
var Table = []Row{
	{Doc: "the host's own files", op: opReadOnly, paths: func(st start) []string {
		_, keep := systemTempDirs()
		return slices.Concat(confine.SystemGrants(), keep, st.c.Expose, executableDirs(st.l.Exe))
	}},
	{Doc: "empty", op: opScratch, paths: func(st start) []string {
		out := slices.Clone(confine.Scratch)
		// claude's HOME: its own when bound (no config directory of its own), else an
		// empty directory of the sandbox's (caches its tools write go nowhere).
		if home := lookupEnv(st.env, "HOME"); home != "" && !slices.Contains(st.claudeRW, filepath.Clean(home)) && filepath.Clean(home) != st.configDir {
			out = append(out, filepath.Clean(home))
		}
		return out
	}},
	{Doc: "invisible", op: opHide, paths: func(st start) []string {
		tmps, _ := systemTempDirs()
		out := slices.Concat(tmps, st.claudeHide, st.c.Hide, []string{filepath.Join(st.c.Workspace, "media")})
		if st.l.Worktree != "" {
			out = append(out, filepath.Dir(st.l.Worktree)) // the other chats' worktrees
		}
		return out
	}},
	{Doc: "writable", op: opBind, paths: writable},
	{Doc: "read-only", op: opReadOnly, paths: readOnly},
	{Doc: "connectable"}, // the agent tool socket: read-only above; the network is not unshared
	{Doc: "environment"}, // what the runner passes (core/runner's Config.env)
	{Doc: "processes", bwrap: []string{"--die-with-parent", "--unshare-pid"}},
	{Doc: "System V IPC", bwrap: []string{"--unshare-ipc"}},
	{Doc: "user namespace, capabilities", bwrap: confine.BubblewrapArgs(-1)},
	{Doc: "system calls", bwrap: []string{"--seccomp", strconv.Itoa(seccompFD)}},
	{Doc: "Landlock"},       // recycled sandboxes only (confine.Exec)
	{Doc: "kernel keyring"}, // a session keyring per start; the filter denies its calls
}

// rowFlags are the bwrap flags of the rows named docs, in Table's order.
func rowFlags(docs ...string) []string {
	var out []string
	for _, r := range Table {
		if slices.Contains(docs, r.Doc) {
			out = append(out, r.bwrap...)
		}
	}
	return out
}

// writable is the "writable" row: the chat's TMPDIR, agent.add_dirs, claude's own state
// (the chat's, overlaid: SpecFor), the workspace or the chat's worktree and what a commit
// on its branch needs of the repository's .git, the chat's media directory.
func writable(st start) []string {
	c, l := st.c, st.l
	out := slices.Concat([]string{l.Tmp}, c.AddDirs, st.claudeRW)
	if l.Worktree == "" {
		out = append(out, c.Workspace)
	} else {
		git := filepath.Join(c.Workspace, ".git")
		out = append(out, l.Worktree, filepath.Join(git, "objects"), filepath.Join(git, "refs", "heads", BranchDir), filepath.Join(git, "logs", "refs", "heads", BranchDir))
		if admin := safegit.WorktreeAdmin(c.Workspace, l.Worktree); admin != "" {
			out = append(out, admin)
		}
	}
	if l.Media != "" {
		out = append(out, filepath.Join(c.Workspace, "media", l.Media))
	}
	return out
}

// readOnly is the "read-only" row: the MCP config files, the login and the operator's
// settings in claude's config directory, the workspace's .claude, and a repository's
// shared parts.
func readOnly(st start) []string {
	c, l := st.c, st.l
	var out []string
	// The chat's own MCP config file (its tool token; a spare's, its process's) and agent.mcp_config's (which
	// may sit in a hidden tree, beside the config file); a relative one is in the
	// workspace, a JSON string no file.
	for _, m := range append([]string{l.MCP}, c.MCPConfig...) {
		if MCPFile(m) && filepath.IsAbs(m) {
			out = append(out, m)
		}
	}
	if st.configDir != "" {
		for _, f := range claudeShared {
			out = append(out, filepath.Join(st.configDir, f))
		}
	}
	ws := c.Workspace
	out = append(out, filepath.Join(ws, ".claude"))
	switch {
	case l.Worktree != "":
		// The repository's own checkout and .git are shared by every chat; the chat's
		// worktree is its own but for its .git pointer and its .claude, its admin
		// directory but for its pointers.
		out = append(out, ws, filepath.Join(l.Worktree, ".git"), filepath.Join(l.Worktree, ".claude"))
		if admin := safegit.WorktreeAdmin(ws, l.Worktree); admin != "" {
			for _, f := range worktreePointers {
				out = append(out, filepath.Join(admin, f))
			}
		}
	case sharedRepo(ws):
		// Other chats work in worktrees of this repository, and the host runs git in
		// it: its .git is no chat's to change.
		out = append(out, filepath.Join(ws, ".git"))
	}
	return out
}
