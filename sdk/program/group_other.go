//go:build !unix

package program

import "os/exec"

// ownGroup: without process groups the context's end kills the program
// alone.
func ownGroup(*exec.Cmd) {}
