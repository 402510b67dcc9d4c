//go:build unix

package procpace

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time of every thread of this process so far, user
// and system.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
