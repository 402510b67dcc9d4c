//go:build unix && !linux

package runner

import "syscall"

// sysProcAttr puts claude in its own process group so a signal reaches the tools it
// started. (Pdeathsig is Linux-only.)
// With cred set, claude runs as that user.
func sysProcAttr(cred *Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: credential(cred)}
}

// lifelineAttr puts the lifeline watcher in claude's process group (see
// startLifeline).
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
