//go:build linux

package nodump

import "syscall"

// prctl options (linux/prctl.h); the syscall package does not name them.
const (
	prGetDumpable = 3
	prSetDumpable = 4
)

func set() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
