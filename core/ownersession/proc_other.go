//go:build !linux

package ownersession

import "syscall"

// processRuns reports whether process pid runs (signal 0 reaches it).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
