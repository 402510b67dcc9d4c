//go:build !linux

package sqlite

import "os"

// syncData flushes f to the disk (fsync; fdatasync where there is one).
func syncData(f *os.File) error { return f.Sync() }
