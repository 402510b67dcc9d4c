//go:build linux

package sandbox

import (
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
