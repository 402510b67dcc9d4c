package lifeline

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestLifeline: the watcher kills the process groups still listed when its
// pipe closes (the host died), the whole group (a leader and a member), and
// leaves a group taken off the list alone; a watcher that died is started
// again with every listed group.
func TestLifeline(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	t.Parallel()
	group := func(t *testing.T, pgid int) *exec.Cmd {
		t.Helper()
		c := exec.Command("sleep", "60")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
		if err := c.Start(); err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	exited := func(c *exec.Cmd) <-chan error {
		ch := make(chan error, 1)
		go func() { ch <- c.Wait() }()
		return ch
	}
	l := New(hclog.NewNullLogger())
	kept, gone := group(t, 0), group(t, 0)
	member := group(t, gone.Process.Pid) // a tool in claude's group
	if !l.Add(kept.Process.Pid) || !l.Add(gone.Process.Pid) {
		t.Fatal("add failed")
	}
	// The watcher dies; the next add starts another with both groups.
	first := l.ended
	_ = syscall.Kill(-l.watcherPID(), syscall.SIGKILL)
	<-first
	late := group(t, 0)
	if !l.Add(late.Process.Pid) || l.ended == first {
		t.Fatal("no new watcher after the first died")
	}
	l.Remove(kept.Process.Pid)
	goneDone, memberDone, lateDone := exited(gone), exited(member), exited(late)
	ended := l.ended
	l.Close()
	<-ended
	for name, ch := range map[string]<-chan error{"listed leader": goneDone, "its member": memberDone, "listed after the restart": lateDone} {
		select {
		case err := <-ch:
			if ws, ok := exitStatus(err); !ok || ws.Signal() != syscall.SIGKILL {
				t.Errorf("%s ended with %v, not SIGKILL", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s still runs after the watcher's end", name)
		}
	}
	if err := syscall.Kill(kept.Process.Pid, 0); err != nil {
		t.Errorf("the group taken off the list was killed: %v", err)
	}
}

// exitStatus is err's wait status when the process was signalled.
func exitStatus(err error) (syscall.WaitStatus, bool) {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return 0, false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ws, ok && ws.Signaled()
}

// watcherPID is the latest watcher's pid.
func (l *Watcher) watcherPID() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pid
}
