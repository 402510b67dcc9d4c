// Package procmem reads what a process holds in memory, for the status
// page: the resident set of the host, each plugin and each warm claude
// process, and the host's Go heap.
package procmem

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// RSS is the resident set size of process pid in bytes, from
// /proc/<pid>/statm; false where it cannot be read (no such process, not
// Linux). It counts the process's private memory and the pages of its
// binary and libraries it has mapped (which the page cache shares).
func RSS(pid int) (int64, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// Self is this process's memory: its resident set (0 when unknown) and
// its Go heap in use (live objects and garbage not yet collected).
func Self() (rss, heap int64) {
	rss, _ = RSS(os.Getpid())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return rss, int64(ms.HeapAlloc)
}
