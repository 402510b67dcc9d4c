// Package termecho turns a terminal's echo off while a secret (a token
// pasted at a prompt) is read, with golang.org/x/sys/unix's termios calls:
// what golang.org/x/term does, without another module.
package termecho

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGet)
	return err == nil
}

// Off turns echo off on terminal fd (lines are still read whole) and
// returns what turns it back on.
func Off(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlGet)
	if err != nil {
		return nil, fmt.Errorf("echo off: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSet, &quiet); err != nil {
		return nil, fmt.Errorf("echo off: %w", err)
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSet, old) }, nil
}
