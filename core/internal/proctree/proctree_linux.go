//go:build linux

package proctree

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// OfPidfd is the pid a pidfd refers to, in the host's pid namespace: asked of the
// kernel (PIDFD_GET_INFO, Linux 6.13), else read from its fdinfo.
func OfPidfd(fd int) int {
	if fd < 0 {
		return 0
	}
	info := unix.PidfdInfo{Mask: unix.PIDFD_INFO_PID}
	if err := unix.IoctlPidfdInfo(fd, &info); err == nil && info.Mask&unix.PIDFD_INFO_PID != 0 && info.Pid > 0 {
		return int(info.Pid)
	}
	return pidFromFdinfo(fd)
}

// pidFromFdinfo is OfPidfd from /proc/self/fdinfo (kernels before 6.13).
func pidFromFdinfo(fd int) int {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0
	}
	for _, ln := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(ln, []byte("Pid:")); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(string(v)))
			return max(n, 0)
		}
	}
	return 0
}
