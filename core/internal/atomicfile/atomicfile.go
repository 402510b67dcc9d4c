// Package atomicfile writes small state files so that a crash leaves
// either the old content or the new, never a torn file: a temporary file
// in the same directory (0600), synced, then renamed over the target.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data (mode 0600).
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; a leftover otherwise
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
