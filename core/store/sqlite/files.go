package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// Modes of the data directory and of every file the store creates.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// prepareDir creates dir with DirMode, or tightens an existing one whose
// mode lets group or others read or write it. Search alone (0711, 0751) is
// kept: agent.run_as and plugin run_as need the user they name to pass
// through data_dir to its own directories; it can neither list data_dir
// nor open the store's files (0600).
func prepareDir(dir string, log hclog.Logger) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat data dir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("data dir %s is not a directory", dir)
	}
	if perm := st.Mode().Perm(); perm&0o066 != 0 || perm&0o700 != 0o700 {
		if err := os.Chmod(dir, DirMode); err != nil {
			return fmt.Errorf("tighten data dir mode: %w", err)
		}
		log.Info("tightened data dir mode", "path", dir, "was", st.Mode().Perm().String(), "now", DirMode.String())
	}
	return nil
}

// prepareFiles creates the database file with FileMode if it is missing
// (SQLite gives the -wal and -shm files the mode of the main file) and
// tightens the modes of the database and its companion files.
func prepareFiles(dbPath string, log hclog.Logger) error {
	f, err := os.OpenFile(dbPath, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	f.Close()
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm", dbPath + "-journal", lockPath(filepath.Dir(dbPath))} {
		if err := tightenFile(p, log); err != nil {
			return err
		}
	}
	return nil
}

func tightenFile(p string, log hclog.Logger) error {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", p, err)
	}
	if st.Mode().Perm() == FileMode {
		return nil
	}
	if err := os.Chmod(p, FileMode); err != nil {
		return fmt.Errorf("tighten mode of %s: %w", p, err)
	}
	log.Info("tightened file mode", "path", p, "was", st.Mode().Perm().String(), "now", FileMode.String())
	return nil
}

func lockPath(dir string) string { return filepath.Join(dir, LockFile) }

// lockDir takes an exclusive, non-blocking flock on the lock file, so two
// processes never write the same database. The kernel drops the lock when
// the process dies, also on kill -9.
func lockDir(dir string) (*os.File, error) {
	p := lockPath(dir)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data dir %s is in use by another process", dir)
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	return f, nil
}

// unlockDir releases the lock and closes its file. The lock belongs to
// the open file description, which a child forked meanwhile shares until
// its exec closes it (the host starts plugins and claude all the time):
// closing this descriptor alone would leave the directory locked for
// that moment, and an Open right after a Close would be refused.
func unlockDir(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir fsyncs a directory, so that the entries of files created in it
// survive a power loss.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
