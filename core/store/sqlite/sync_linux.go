package sqlite

import (
	"os"
	"syscall"
)

// syncData flushes f's data (and the metadata needed to read it, such as
// its size) to the disk: fdatasync, as SQLite syncs its WAL; a full fsync
// would also write the modification time, one more journal commit of the
// file system per sync.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
