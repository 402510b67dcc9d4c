//go:build unix && !linux

package sandbox

import (
	"syscall"

	"github.com/clawhost/clawhost/core/internal/runas"
)

// sysProcAttr puts claude in its own process group so a signal reaches the tools it
// started. (Pdeathsig is Linux-only.)
// With u set, claude runs as that user.
func sysProcAttr(u *runas.User) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: u.Credential()}
}

// waitExited would wait for the child pid's exit without reaping it; elsewhere than on
// Linux it does not (false): hostChild.Release kills what claude left after the reap.
func waitExited(int) bool { return false }

// signalGroup signals the process group led by pid; errors (group gone) are ignored.
func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// credentialAttr runs a process as u (nil: as the host).
func credentialAttr(u *runas.User) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: u.Credential()}
}
