package procstat

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAChildSeenAndReaped: a child started here is among this process's
// children, alive, in its parent's group and started just now; killed and
// not yet waited for it is a zombie, which Alive does not count; reaped it
// is gone.
func TestAChildSeenAndReaped(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	if kids := Children(os.Getpid()); !slices.Contains(kids, pid) {
		t.Fatalf("children of %d: %v, want %d among them", os.Getpid(), kids, pid)
	}
	st, ok := Read(pid)
	if !ok || !Alive(pid) {
		t.Fatalf("pid %d: read %v, alive %v", pid, ok, Alive(pid))
	}
	if st.PPID() != os.Getpid() || st.PGID() != syscall.Getpgrp() {
		t.Errorf("pid %d: parent %d group %d, want %d and %d", pid, st.PPID(), st.PGID(), os.Getpid(), syscall.Getpgrp())
	}
	if now := time.Now(); st.Started().Before(now.Add(-time.Minute)) || st.Started().After(now.Add(2*time.Second)) {
		t.Errorf("started %v, want about %v", st.Started(), now)
	}
	// A zombie until waited for: waitid with WNOWAIT returns once it died
	// and leaves it unreaped.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := Read(pid); st.State() != "Z" || Alive(pid) {
		t.Errorf("killed, unreaped pid %d: state %q, alive %v; want Z, not alive", pid, st.State(), Alive(pid))
	}
	_ = cmd.Wait()
	if _, ok := Read(pid); ok || Alive(pid) {
		t.Errorf("reaped pid %d still read", pid)
	}
}
