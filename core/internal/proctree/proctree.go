// Package proctree reads a process's place in the process tree from /proc: the command
// bubblewrap runs, beneath its init, and the process a pidfd refers to.
package proctree

import (
	"os"
	"strconv"
	"strings"
)

// Inner is the pid of the command bwrap runs, as the host sees it
// (bwrap → its init in the new pid namespace → the command); pid itself
// when it has no such descendant. Status shows the memory of that process.
func Inner(pid int) int {
	cur := pid
	for range 2 {
		next := FirstChild(cur)
		if next == cur {
			return pid
		}
		cur = next
	}
	return cur
}

// FirstChild is pid's first child, or pid without one.
func FirstChild(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err != nil {
		return pid
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return pid
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return pid
	}
	return n
}
