//go:build linux

package runner

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/clawhost/clawhost/core/internal/runas"
)

// sysProcAttr puts claude in its own process group (so a signal reaches the tools it
// started) and kills it when the host dies. Pdeathsig fires when the OS thread that
// started the child exits; the Go runtime keeps its threads unless a goroutine exits while
// locked to one, which this package never does.
// With u set, claude runs as that user.
func sysProcAttr(u *runas.User) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: u.Credential()}
}

// lifelineAttr puts the lifeline watcher in a process group of its own (a
// signal to the host's group, a terminal's Ctrl-C, leaves it be) and, unlike
// claude, without Pdeathsig: it must outlive the host to kill what claude
// started.
func lifelineAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExited blocks until the child pid has exited, without reaping it (its
// zombie keeps its pid and process group id taken); false when that cannot
// be waited for.
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// signalGroup signals the process group led by pid; errors (group gone) are ignored.
func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// credentialAttr runs a process as u (nil: as the host).
func credentialAttr(u *runas.User) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: u.Credential()}
}

// resolvedPath is the absolute path p resolves to, every link followed; ok is false when
// it cannot tell (realPath then asks filepath.EvalSymlinks), true with "" when p does not
// exist. Most paths hold no link: opened refusing every link (openat2's
// RESOLVE_NO_SYMLINKS, one path walk) p is its own answer. Otherwise the kernel names what
// it opened (/proc/self/fd): one walk again, and a read of /proc.
func resolvedPath(p string) (string, bool) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
	switch err {
	case nil:
		_ = unix.Close(fd)
		return filepath.Clean(p), true
	case unix.ENOENT, unix.ENOTDIR:
		return "", true
	case unix.ELOOP:
	default:
		return "", false // ENOSYS (before Linux 5.6), EACCES, ...
	}
	if fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n == 0 || n == len(buf) || buf[0] != '/' {
		return "", false
	}
	r := string(buf[:n])
	if strings.HasSuffix(r, " (deleted)") {
		return "", false
	}
	return r, true
}
