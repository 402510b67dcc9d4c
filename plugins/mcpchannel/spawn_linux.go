package mcpchannel

import (
	"os/exec"
	"runtime"
	"syscall"
)

// spawns starts processes from one goroutine locked to one OS thread that
// never exits: the kernel delivers Pdeathsig when the thread that forked
// the child exits, not the process, so a fork from a thread the Go runtime
// may retire would kill the server at random. With it, the server gets
// SIGKILL exactly when this plugin dies, even by SIGKILL.
var spawns = func() chan spawnReq {
	reqs := make(chan spawnReq)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return reqs
}()

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// start starts cmd in a process group of its own (stopGroup ends it with
// its children) that dies with this process.
func start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := make(chan error, 1)
	spawns <- spawnReq{cmd: cmd, done: done}
	return <-done
}
