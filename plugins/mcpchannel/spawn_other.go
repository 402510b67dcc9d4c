//go:build !linux

package mcpchannel

import (
	"os/exec"
	"syscall"
)

// start starts cmd in a process group of its own (stopGroup ends it with
// its children). Without Linux's Pdeathsig a server outlives a plugin
// killed by SIGKILL until it reads the end of its stdin.
func start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}
