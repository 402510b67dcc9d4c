//go:build !linux

package memtrim

// dropBinary does nothing where there is no /proc/self/maps and
// MADV_DONTNEED with Linux's meaning.
func dropBinary() (int64, error) { return 0, nil }
