//go:build unix && !linux

package runner

import "syscall"

// sysProcAttr puts claude in its own process group so a signal reaches the tools it
// started. (Pdeathsig is Linux-only.)
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// lifelineAttr puts the lifeline watcher in claude's process group (see
// startLifeline).
func lifelineAttr(pgid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
}

// signalGroup signals the process group led by pid; errors (group gone) are ignored.
func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
