package deathsig

import "syscall"

func set(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
