//go:build !linux

package deathsig

import "syscall"

func set(*syscall.SysProcAttr) {}
