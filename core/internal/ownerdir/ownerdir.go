// Package ownerdir makes temporary directories that outlive a crash of
// the process that made them only until the next one looks: each names its
// process in an owner file, and RemoveLeftovers removes those whose process
// has exited. No hook runs after a kill -9, nor after the last test of a
// test binary, so this is the only cleanup such a directory gets.
package ownerdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// File is the owner file's name in a directory: the owner's pid.
const File = "owner.pid"

// Make creates a directory in dir (os.MkdirTemp's dir and pattern) that
// names this process as its owner.
func Make(dir, pattern string) (string, error) {
	d, err := os.MkdirTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(d, File), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(d)
		return "", err
	}
	return d, nil
}

// RemoveLeftovers removes the directories matching pattern in dir (as
// filepath.Glob) whose owner process has exited. A directory of another
// user's process stays (signalling it fails with EPERM, not ESRCH). One
// without an owner file stays, unless unnamed is positive and it is older
// than that (a directory made before its maker wrote owner files; a
// younger one may be about to be named).
func RemoveLeftovers(dir, pattern string, unnamed time.Duration) {
	dirs, _ := filepath.Glob(filepath.Join(dir, pattern))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, File))
		if err != nil {
			if fi, serr := os.Stat(d); errors.Is(err, os.ErrNotExist) && unnamed > 0 && serr == nil && fi.IsDir() && time.Since(fi.ModTime()) > unnamed {
				os.RemoveAll(d)
			}
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
