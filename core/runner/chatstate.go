package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// A chat's claude state. claude keeps everything a conversation leaves
// behind in its config directory: the transcripts --resume reads
// (projects/<cwd>/<session>.jsonl), its auto-memory (projects/<cwd>/memory),
// todos, shell snapshots, file history, .claude.json. One directory for
// every chat would let one chat's tools read and rewrite another's
// conversation, so in the sandbox each chat gets a directory of its own,
// <StateDir>/chats/<key>, bound at the config directory's path (claude sees
// CLAUDE_CONFIG_DIR unchanged); the login and the operator's settings in
// the real directory are bound into it read-only (claudeShared). Without a
// sandbox nothing keeps a tool from reading any file of the host's user,
// so claude uses the config directory itself.

// chatStateDir is the directory of key's claude state under dir.
func chatStateDir(dir, key string) string {
	name := url.PathEscape(key)
	if name == "" || name == "." || name == ".." || len(name) > 120 {
		sum := sha256.Sum256([]byte(key))
		name = "h-" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(dir, "chats", name)
}

// ChatConfigDir is the claude config directory a chat's sandboxed claude
// uses: <stateDir>/chats/<key> (stateDir is Config.StateDir), bound at
// CLAUDE_CONFIG_DIR's path in the sandbox; its transcripts are there. A
// chat whose claude never ran sandboxed has none (the directory does not
// exist): its claude used the config directory itself.
func ChatConfigDir(stateDir, key string) string { return chatStateDir(stateDir, key) }

// prepareChatState makes the chat's state directory before a sandboxed
// start: on first use a copy of the config directory's .claude.json
// without its per-directory "projects" (which would tell one chat what
// another's claude did), and, when the process resumes a session whose
// transcript is still in the shared directory (written before chats had
// their own), a copy of that transcript.
func (r *Runner) prepareChatState(c *Config, l sandboxLaunch) error {
	dir := lookupEnv(l.env, "CLAUDE_CONFIG_DIR")
	if l.chatState == "" || dir == "" {
		return nil
	}
	if err := os.MkdirAll(l.chatState, 0o700); err != nil {
		return fmt.Errorf("chat state: %w", err)
	}
	var made []string
	if _, err := os.Lstat(filepath.Join(l.chatState, ".claude.json")); errors.Is(err, fs.ErrNotExist) {
		if ok, err := seedClaudeJSON(filepath.Join(dir, ".claude.json"), filepath.Join(l.chatState, ".claude.json")); err != nil {
			return fmt.Errorf("chat state: %w", err)
		} else if ok {
			made = append(made, filepath.Join(l.chatState, ".claude.json"))
		}
	}
	if l.resume { // the session id is a uuid (Run refuses others): a file name, no pattern
		own, _ := filepath.Glob(filepath.Join(l.chatState, "projects", "*", l.sessionID+".jsonl"))
		if len(own) == 0 {
			old, _ := filepath.Glob(filepath.Join(dir, "projects", "*", l.sessionID+".jsonl"))
			for _, src := range old {
				proj := filepath.Join(l.chatState, "projects", filepath.Base(filepath.Dir(src)))
				if err := os.MkdirAll(proj, 0o700); err != nil {
					return fmt.Errorf("chat state: %w", err)
				}
				dst := filepath.Join(proj, filepath.Base(src))
				if err := copyFile(src, dst); err != nil {
					return fmt.Errorf("chat state: %w", err)
				}
				made = append(made, filepath.Join(l.chatState, "projects"), proj, dst)
			}
		}
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

// seedClaudeJSON writes src's JSON object without "projects" to dst
// (0600); false when src does not exist.
func seedClaudeJSON(src, dst string) (bool, error) {
	b, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return false, nil // not claude's: the chat starts without it
	}
	delete(m, "projects")
	out, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	return true, os.WriteFile(dst, out, 0o600)
}

// copyFile copies src to dst (0600), not following a link at src.
func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
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
