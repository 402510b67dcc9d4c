// Package procmem reads what a process holds in memory, for the status
// page: the resident set of the host, each plugin and each warm claude
// process, the private part of it, and the host's Go heap.
package procmem

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Usage is a process's memory, in bytes.
type Usage struct {
	// RSS is the resident set: the private memory and the pages of the
	// binary and libraries the process has mapped, which the page cache
	// holds once for every process that maps them and the kernel drops
	// first when memory runs short (clawhost's processes drop theirs
	// after the start: core/internal/memtrim). It moves with what the process last
	// ran.
	RSS int64
	// Private is the resident memory only this process holds (heap,
	// stacks, written data; RssAnon): what it costs the machine.
	Private int64
}

// Read is the memory of process pid, from /proc/<pid>/statm (resident
// minus shared pages is the private part); false where it cannot be read
// (no such process, not Linux).
func Read(pid int) (Usage, bool) {
	if pid <= 0 {
		return Usage{}, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return Usage{}, false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return Usage{}, false
	}
	resident, err1 := strconv.ParseInt(f[1], 10, 64)
	shared, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return Usage{}, false
	}
	page := int64(os.Getpagesize())
	return Usage{RSS: resident * page, Private: max(resident-shared, 0) * page}, true
}

// Self is this process's memory (zero when unknown) and its Go heap in
// use (live objects and garbage not yet collected).
func Self() (Usage, int64) {
	u, _ := Read(os.Getpid())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return u, int64(ms.HeapAlloc)
}
