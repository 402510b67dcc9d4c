//go:build !linux

package sdk

import "syscall"

// parentDeathSignal is 0: only Linux has a parent-death signal, so the
// plugin watches its parent itself (watchParent).
func parentDeathSignal() syscall.Signal { return 0 }
