package attach

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/ownersession"
	"github.com/clawhost/clawhost/core/runner"
)

// ImportTranscript copies the terminal session's transcript src (a
// <session id>.jsonl file, read with the host's rights) to where a
// clawhost-run claude with config directory configDir, working in
// workdir, resumes session id from (0600). A transcript already there is
// replaced: the terminal's is the newer. It returns the path written.
func ImportTranscript(src, configDir, workdir, id string) (string, error) {
	if uuid.Validate(id) != nil {
		return "", fmt.Errorf("the terminal's session id %q is not a uuid", id)
	}
	if !strings.HasSuffix(src, string(filepath.Separator)+id+".jsonl") {
		return "", fmt.Errorf("the terminal's transcript %s is not session %s's", src, id)
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return "", fmt.Errorf("the terminal's transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the terminal's transcript %s is not a regular file", src)
	}
	dir := ownersession.ProjectDir(configDir, workdir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, id+".jsonl")
	if filepath.Clean(dst) == filepath.Clean(src) {
		return dst, nil // the terminal and the chat share the config directory
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, ".import-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		if errors.Is(err, fs.ErrPermission) {
			return "", fmt.Errorf("copying the terminal's transcript: %w", err)
		}
		return "", err
	}
	return dst, nil
}

// RunnerFallback is the Options.Fallback of a host whose turns the
// runner of config runs: the terminal's transcript is copied into the
// config directory of the turn's agent, under the directory the turn works
// in, and the chat resumes the terminal's session.
func RunnerFallback(config func() runner.Config) func(Link, runner.TurnRequest) (string, error) {
	return func(l Link, req runner.TurnRequest) (string, error) {
		rc := config()
		c := rc
		if a, ok := rc.Agents[req.Agent]; ok {
			c = a
		}
		dir := cmp.Or(req.Dir, c.Workspace)
		cfgDir := cmp.Or(c.ConfigDir, c.Env["CLAUDE_CONFIG_DIR"])
		if cfgDir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			cfgDir = filepath.Join(home, ".claude")
		}
		if _, err := ImportTranscript(l.Transcript, cfgDir, dir, l.SessionID); err != nil {
			return "", err
		}
		return l.SessionID, nil
	}
}
