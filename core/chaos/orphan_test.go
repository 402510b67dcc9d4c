package chaos

import (
	"os"
	"testing"
	"time"
)

// TestInClaudesGroup: a process in the group of a claude the run log names
// is the scenario's (a tool claude left), unless the
// group id is that pid reused: make chaos beside another worktree's tests
// killed, as an "orphan", a plugin whose own pid (and group) had been a
// claude's earlier in the campaign.
func TestInClaudesGroup(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	claude := map[int]time.Time{100: at}
	all := map[int]proc{
		100: {pid: 100, pgid: 100, started: at.Add(-30 * time.Millisecond)}, // the claude itself, alive
		101: {pid: 101, pgid: 100, started: at.Add(time.Second)},            // its tool
	}
	for _, c := range []struct {
		name string
		all  map[int]proc
		p    proc
		want bool
	}{
		{"the claude", all, all[100], true},
		{"its tool", all, all[101], true},
		{"its tool, the claude gone", map[int]proc{101: all[101]}, all[101], true},
		{"another group", all, proc{pid: 102, pgid: 7, started: at}, false},
		{"the pid reused by another test's process", map[int]proc{100: {pid: 100, pgid: 100, started: at.Add(5 * time.Minute)}},
			proc{pid: 100, pgid: 100, started: at.Add(5 * time.Minute)}, false},
		{"a member of the reused group", map[int]proc{100: {pid: 100, pgid: 100, started: at.Add(5 * time.Minute)}},
			proc{pid: 103, pgid: 100, started: at.Add(6 * time.Minute)}, false},
		{"older than the claude", map[int]proc{}, proc{pid: 104, pgid: 100, started: at.Add(-time.Hour)}, false},
	} {
		if got := inClaudesGroup(c.all, claude, c.p); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestProcStarted: procs reads a process's start time (stat's 22nd field)
// onto the wall clock.
func TestProcStarted(t *testing.T) {
	me, ok := procs()[os.Getpid()]
	if !ok {
		t.Fatal("this process is not in /proc")
	}
	if now := time.Now(); me.started.After(now.Add(2*time.Second)) || me.started.Before(now.Add(-time.Hour)) {
		t.Fatalf("this process started at %v, it is %v now", me.started, now)
	}
}
