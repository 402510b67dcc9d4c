package ownersession

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrDiverged: the owner's file of a session is not where the chat's
// transcript began — the terminal went on with it meanwhile — so handing
// the chat's back would lose the terminal's turns.
var ErrDiverged = errors.New("the terminal's transcript of this session changed since the chat took it; it was left as it is")

// maxTranscript bounds a transcript copied whole into memory.
const maxTranscript = 256 << 20

// Read is the transcript at path, which must be a regular file (a link is
// not followed) of at most 256 MiB.
func Read(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxTranscript {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, maxTranscript>>20)
	}
	return os.ReadFile(path)
}

// Rename is transcript data of session oldID as the transcript of session
// newID: every occurrence of the old id (the records' sessionId) is the new
// one. A session id is a uuid, so it names nothing else in the file.
func Rename(data []byte, oldID, newID string) []byte {
	if oldID == newID || !ValidID(oldID) || !ValidID(newID) {
		return data
	}
	return bytes.ReplaceAll(data, []byte(oldID), []byte(newID))
}

// HandBack writes data, a chat's transcript of a session, to dst, the
// owner's file of it. When dst exists it must hold the start of data (the
// chat went on from it; equal is nothing to do), else ErrDiverged and dst
// is left as it is. The file is written beside dst and renamed over it,
// 0600; a directory it makes is 0700; both take the owner of the
// config directory's projects folder (the host may run as root for
// another user). changed is false when dst already held data.
func HandBack(data []byte, dst string) (changed bool, err error) {
	old, err := Read(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, err
	case bytes.Equal(old, data):
		return false, nil
	case !bytes.HasPrefix(data, old):
		return false, ErrDiverged
	}
	dir := filepath.Dir(dst)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, err
		}
		chownLike(dir, filepath.Dir(dir))
	}
	tmp, err := os.CreateTemp(dir, ".clawhost-handback-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return false, err
	}
	chownLike(tmp.Name(), filepath.Dir(dir))
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return false, err
	}
	return true, nil
}

// chownLike gives path the owner of ref, when the host may (it runs as
// root); otherwise the file stays the host's, which is the owner's when
// they run clawhost themselves.
func chownLike(path, ref string) {
	if os.Geteuid() != 0 {
		return
	}
	fi, err := os.Stat(ref)
	if err != nil {
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = os.Lchown(path, int(st.Uid), int(st.Gid))
	}
}

// ConfigDirFor is the CLAUDE_CONFIG_DIR a terminal command must set for
// sessions kept in configDir: "" when it is defaultDir (the ~/.claude
// claude uses without the variable). session.TerminalCommand prints the
// command.
func ConfigDirFor(configDir, defaultDir string) string {
	if filepath.Clean(configDir) == filepath.Clean(defaultDir) {
		return ""
	}
	return configDir
}
