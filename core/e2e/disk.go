package e2e

import (
	"errors"
	"os"
	"syscall"
)

// FillDisk writes path until its file system is full (ENOSPC): the
// disk-full tests' filler; deleting path frees the space again.
func FillDisk(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}
