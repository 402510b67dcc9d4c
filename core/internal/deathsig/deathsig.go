// Package deathsig asks the kernel to kill a child process when its
// parent dies (Linux's parent-death signal, SIGKILL). Other systems have
// no such signal: there the child finds out by itself (the sdk ends a
// plugin whose parent died; claude's lifeline watcher ends its group).
package deathsig

import "syscall"

// Set makes a's child get SIGKILL when the thread that started it ends
// (where the system offers it; a no-op elsewhere). a must not be nil.
func Set(a *syscall.SysProcAttr) { set(a) }
