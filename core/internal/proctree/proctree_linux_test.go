//go:build linux

package proctree

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// OfPidfd asks the kernel, pidFromFdinfo reads /proc: both name the process the pidfd
// refers to.
func TestOfPidfd(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	must(t, err)
	defer unix.Close(fd)
	if got := OfPidfd(fd); got != cmd.Process.Pid {
		t.Errorf("OfPidfd = %d, want %d", got, cmd.Process.Pid)
	}
	if got := pidFromFdinfo(fd); got != cmd.Process.Pid {
		t.Errorf("pidFromFdinfo = %d, want %d", got, cmd.Process.Pid)
	}
	if got := OfPidfd(-1); got != 0 {
		t.Errorf("OfPidfd(-1) = %d", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
