//go:build !linux

package confine

// State is what this kernel gives a sandbox: nothing outside Linux (no seccomp
// filter mode, no Landlock).
func State() (seccompOK bool, landlockABI int) { return false, 0 }
