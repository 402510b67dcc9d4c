package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawhost/clawhost/core/sandbox"
)

// Sandbox modes (Config.Sandbox, agent.sandbox): core/sandbox's.
const (
	// SandboxAuto runs claude under bubblewrap when bwrap is installed and
	// a probe run succeeds, else without a sandbox (Runner.SandboxState says
	// why, and New logs a warning).
	SandboxAuto = sandbox.Auto
	// SandboxOff runs claude without a sandbox.
	SandboxOff = sandbox.Off
)

// SandboxModes are the values Config.Sandbox accepts.
var SandboxModes = sandbox.Modes

// agentSandbox is what the probe found out about an agent's sandbox: the bwrap path when
// claude runs in one, and the sentence Runner.SandboxState returns.
type agentSandbox struct {
	bwrap string // "" without a sandbox
	state string
	// helper is how the sandbox is made where New tried recycled sandboxes (ZygoteEnv):
	// "recycled" (one of the agent's recycled sandboxes, sandbox.Pool) or "per
	// start" (the helper could not run, or ZygoteEnv=0: bubblewrap per start); "" where it
	// did not (a binary that is no helper).
	helper string
}

// sandboxLaunch is what one process start adds to its agent's Config for
// the sandbox (sandbox.Launch, and what the runner prepares on the disk): its TMPDIR and
// environment, the chat's media directory and worktree, the MCP config file naming its
// tool token, the claude executable and the chat's own claude state directory ("" for
// none).
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

// view is l as core/sandbox's policy reads it.
func (l sandboxLaunch) view() sandbox.Launch {
	return sandbox.Launch{Tmp: l.tmp, Env: l.env, Media: l.media, Worktree: l.worktree, MCP: l.mcp, Exe: l.exe, ChatState: l.chatState}
}

// policy is what c says of its sandbox, as core/sandbox's policy reads it.
func (c Config) policy() sandbox.Policy {
	return sandbox.Policy{Workspace: c.Workspace, AddDirs: c.AddDirs, Expose: c.Expose, Hide: c.Hide, MCPConfig: c.MCPConfig, RunAs: c.RunAs != nil}
}

// sandboxSpecFor is what the process l describes may see (sandbox.SpecFor): the list
// docs/security.md ("What a sandboxed claude sees") writes down.
func (c Config) sandboxSpecFor(l sandboxLaunch) sandbox.Spec {
	return sandbox.SpecFor(c.policy(), l.view())
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

// lookupEnv is the last value of key in env ("" when absent), as exec uses it.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
