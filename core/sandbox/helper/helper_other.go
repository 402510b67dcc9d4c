//go:build !linux

package helper

import (
	"fmt"
	"os"
)

// Arg is the argument that makes the clawhost binary the sandbox helper; Linux-only.
const Arg = "__sandbox-helper"

// Main is the sandbox helper, Linux-only (mount and pid namespaces).
func Main() int {
	fmt.Fprintln(os.Stderr, "sandbox helper: Linux only")
	return 2
}
