// Package chatstate keeps a chat's claude state on the disk. claude keeps everything a
// conversation leaves behind in its config directory: the transcripts --resume reads
// (projects/<cwd>/<session>.jsonl), its auto-memory (projects/<cwd>/memory), todos,
// shell snapshots, file history, .claude.json. One directory for every chat would let
// one chat's tools read and rewrite another's conversation, so in the sandbox each chat
// gets a directory of its own, <stateDir>/chats/<key> (Dir), bound at the config
// directory's path (claude sees CLAUDE_CONFIG_DIR unchanged); core/runner binds the
// login and the operator's settings in the real directory into it read-only. Without a
// sandbox nothing keeps a tool from reading any file of the host's user, so claude uses
// the config directory itself.
package chatstate

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

// Dir is the directory of conversation key's claude state under stateDir.
func Dir(stateDir, key string) string {
	name := url.PathEscape(key)
	if name == "" || name == "." || name == ".." || len(name) > 120 {
		sum := sha256.Sum256([]byte(key))
		name = "h-" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(stateDir, "chats", name)
}

// Prepare makes the chat state directory dir before a sandboxed start of claude, whose
// own config directory is configDir: on first use a copy of configDir's .claude.json
// without its per-directory "projects" (which would tell one chat what another's claude
// did), and, when the process resumes session whose transcript is still in configDir
// (written before chats had their own), a copy of that transcript. made is what it
// wrote below dir, for the caller to give to claude's user.
func Prepare(configDir, dir, session string, resume bool) (made []string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("chat state: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".claude.json")); errors.Is(err, fs.ErrNotExist) {
		if ok, err := seedClaudeJSON(filepath.Join(configDir, ".claude.json"), filepath.Join(dir, ".claude.json")); err != nil {
			return nil, fmt.Errorf("chat state: %w", err)
		} else if ok {
			made = append(made, filepath.Join(dir, ".claude.json"))
		}
	}
	if !resume { // the session id is a uuid (core/runner's Run refuses others): a file name, no pattern
		return made, nil
	}
	if own, _ := filepath.Glob(filepath.Join(dir, "projects", "*", session+".jsonl")); len(own) > 0 {
		return made, nil
	}
	old, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", session+".jsonl"))
	for _, src := range old {
		proj := filepath.Join(dir, "projects", filepath.Base(filepath.Dir(src)))
		if err := os.MkdirAll(proj, 0o700); err != nil {
			return nil, fmt.Errorf("chat state: %w", err)
		}
		dst := filepath.Join(proj, filepath.Base(src))
		if err := copyFile(src, dst); err != nil {
			return nil, fmt.Errorf("chat state: %w", err)
		}
		made = append(made, filepath.Join(dir, "projects"), proj, dst)
	}
	return made, nil
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
