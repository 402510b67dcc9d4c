package runner

import (
	"fmt"
	"os"

	"github.com/clawhost/clawhost/core/internal/chatstate"
)

// A chat's claude state: core/internal/chatstate.

// chatStateDir is the directory of key's claude state under dir (chatstate.Dir).
func chatStateDir(dir, key string) string { return chatstate.Dir(dir, key) }

// ChatConfigDir is the claude config directory a chat's sandboxed claude
// uses: <stateDir>/chats/<key> (stateDir is Config.StateDir), bound at
// CLAUDE_CONFIG_DIR's path in the sandbox; its transcripts are there. A
// chat whose claude never ran sandboxed has none (the directory does not
// exist): its claude used the config directory itself.
func ChatConfigDir(stateDir, key string) string { return chatStateDir(stateDir, key) }

// prepareChatState makes the chat's state directory before a sandboxed start
// (chatstate.Prepare) and gives what it made to claude's user (agent.run_as).
func (r *Runner) prepareChatState(c *Config, l sandboxLaunch) error {
	dir := lookupEnv(l.env, "CLAUDE_CONFIG_DIR")
	if l.chatState == "" || dir == "" {
		return nil
	}
	made, err := chatstate.Prepare(dir, l.chatState, l.sessionID, l.resume)
	if err != nil {
		return err
	}
	if u := c.RunAs; u != nil {
		// <state>/chats stays the host's (0711, prepareRunAs): agents may
		// run as several users, each passing through to its chats' own.
		if err := u.Chown(append([]string{l.chatState}, made...)...); err != nil {
			return fmt.Errorf("agent.run_as: chat state: %w", err)
		}
	}
	return nil
}

// ChatClaudeDir is the claude config directory the claude of agent's chat
// key keeps its transcripts in (projects/<cwd>/<session>.jsonl): the
// chat's own state (chatStateDir) when its claude runs sandboxed with a
// config directory, else that config directory; "" when claude uses its
// user's ~/.claude (no CLAUDE_CONFIG_DIR). own gives the paths a caller
// made in it to the agent's run_as user (nothing to do without one). A
// transcript placed there under a session id is what that chat's next
// --resume of the id reads (prepareChatState copies nothing over it).
func (r *Runner) ChatClaudeDir(agent, key string) (dir string, own func(paths ...string) error) {
	c := r.profile(agent)
	own = func(...string) error { return nil }
	if u := c.RunAs; u != nil {
		own = u.Chown
	}
	dir = lookupEnv(c.baseEnv(os.Environ()), "CLAUDE_CONFIG_DIR")
	if dir != "" && r.sandboxOf(c).bwrap != "" {
		return chatStateDir(r.cfg.StateDir, key), own
	}
	return dir, own
}
