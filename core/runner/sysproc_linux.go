//go:build linux

package runner

import "syscall"

// sysProcAttr puts claude in its own process group (so a signal reaches the tools it
// started) and kills it when the host dies. Pdeathsig fires when the OS thread that
// started the child exits; the Go runtime keeps its threads unless a goroutine exits while
// locked to one, which this package never does.
// With cred set, claude runs as that user.
func sysProcAttr(cred *Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: credential(cred)}
}

// lifelineAttr puts the lifeline watcher in claude's process group (see
// startLifeline) and, unlike claude, without Pdeathsig: it must outlive the
// host to kill what claude started.
func lifelineAttr(pgid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
}

// signalGroup signals the process group led by pid; errors (group gone) are ignored.
func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// credentialAttr runs a process as cred (nil: as the host).
func credentialAttr(cred *Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: credential(cred)}
}

func credential(c *Credential) *syscall.Credential {
	if c == nil {
		return nil
	}
	return &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}
}
