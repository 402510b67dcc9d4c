package sdktest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// WriteExecutable writes a program (a test's shell script, usually) to path
// with mode perm, as os.WriteFile does, failing tb if it cannot.
//
// A test that writes a program and runs it at once can fail with "text file
// busy" when its package's tests run in parallel (Go issue 22315): a process
// another test starts meanwhile inherits the open descriptor between fork
// and exec, and Linux refuses to run a file someone has open for writing.
// WriteExecutable holds syscall.ForkLock for reading while the file is
// open, as the syscall package's own descriptor-creating calls do, so no
// process this binary starts can inherit it.
func WriteExecutable(tb testing.TB, path string, data []byte, perm os.FileMode) {
	tb.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, data, perm)
	syscall.ForkLock.RUnlock()
	if err != nil {
		tb.Fatal(err)
	}
}

// ShellScript writes body as a /bin/sh script named name (mode 0700, with
// WriteExecutable) in a new directory of tb's and returns its path: a fake
// engine, hook or tool for a plugin under test to run.
func ShellScript(tb testing.TB, name, body string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	WriteExecutable(tb, p, []byte("#!/bin/sh\n"+body+"\n"), 0o700)
	return p
}
