//go:build !linux

package confine

import (
	"errors"
	"os"
)

// State is what this kernel gives a sandbox: nothing outside Linux (no seccomp
// filter mode, no Landlock).
func State() (seccompOK bool, landlockABI int) { return false, 0 }

// Filter is the compiled syscall filter: none outside Linux (no sandbox runs there).
func Filter() ([]byte, error) { return nil, errNoFilter }

// errNoFilter is Filter's answer outside Linux.
var errNoFilter = errors.New("confine: no syscall filter outside Linux")

// FilterFile is Filter's pipe for bubblewrap: none outside Linux.
func FilterFile() (*os.File, error) { return nil, errNoFilter }
