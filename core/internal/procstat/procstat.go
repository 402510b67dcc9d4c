// Package procstat reads processes' /proc/PID/stat lines (Linux): the
// state, the parent, the process group, the CPU time and when a process
// started. The end-to-end and chaos tests look with it for the processes a
// host started and for those it left behind. Elsewhere than Linux there is
// no /proc: nothing is found.
package procstat

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stat is one process's /proc/PID/stat line.
type Stat struct {
	// PID is the process's id.
	PID int
	// Fields are the line's fields after the command's name (which may hold
	// spaces), from the state on: the state is Fields[0], the parent 1, the
	// process group 2, minflt 7, utime 11, stime 12, the start time 19.
	Fields []string
}

// Read reads pid's stat line; false when there is no such process.
func Read(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	s := string(b)
	return Stat{PID: pid, Fields: strings.Fields(s[strings.LastIndexByte(s, ')')+1:])}, true
}

// All is every process's stat line, in /proc's order.
func All() []Stat {
	ents, _ := os.ReadDir("/proc")
	var out []Stat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := Read(pid); ok {
			out = append(out, s)
		}
	}
	return out
}

// Children are the pids whose parent is pid.
func Children(pid int) []int {
	var out []int
	for _, s := range All() {
		if s.PPID() == pid {
			out = append(out, s.PID)
		}
	}
	return out
}

// Alive reports whether pid is a process that is not a zombie.
func Alive(pid int) bool {
	s, ok := Read(pid)
	return ok && s.State() != "" && s.State() != "Z"
}

// Int is field i as a number; 0 when the line has no such field.
func (s Stat) Int(i int) int64 {
	if i >= len(s.Fields) {
		return 0
	}
	n, _ := strconv.ParseInt(s.Fields[i], 10, 64)
	return n
}

// State is the process's state letter (R, S, D, Z, ...); "" when unread.
func (s Stat) State() string {
	if len(s.Fields) == 0 {
		return ""
	}
	return s.Fields[0]
}

// PPID is the parent's pid.
func (s Stat) PPID() int { return int(s.Int(1)) }

// PGID is the process group's id.
func (s Stat) PGID() int { return int(s.Int(2)) }

// Started is when the process started, on the wall clock to the kernel's
// 10 ms ticks (USER_HZ is 100 on Linux), counted from the machine's boot.
func (s Stat) Started() time.Time {
	return bootTime().Add(time.Duration(s.Int(19)) * 10 * time.Millisecond)
}

// bootTime is when the machine booted (/proc/stat's btime).
var bootTime = sync.OnceValue(func() time.Time {
	b, _ := os.ReadFile("/proc/stat")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			sec, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(sec, 0)
		}
	}
	return time.Time{}
})
