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
	// after the start: sdk/memtrim). It moves with what the process last
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

// Tree is the proportional set size (Pss, /proc/<pid>/smaps_rollup) of
// process pid and every process below it: what the tree holds, each page
// shared with other processes counted in part (a page three processes map
// counts a third), so the trees of several processes add up to what they
// hold together. It is the figure the runner's warm_memory budget counts
// for a warm claude (bubblewrap, claude and the tools and MCP servers it
// started). false when pid's own figure cannot be read (no such process,
// not Linux); a child that ends while the tree is walked is left out.
func Tree(pid int) (int64, bool) {
	if pid <= 0 {
		return 0, false
	}
	total, ok := pss(pid)
	if !ok {
		return 0, false
	}
	seen := map[int]bool{pid: true}
	stack := children(pid)
	for len(stack) > 0 && len(seen) < maxTree {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		if v, ok := pss(c); ok {
			total += v
		}
		stack = append(stack, children(c)...)
	}
	return total, true
}

// maxTree bounds the processes Tree walks (a fork bomb under claude must
// not make the status page or the pool walk for ever).
const maxTree = 1024

// pss is the Pss line of /proc/<pid>/smaps_rollup, in bytes.
func pss(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// children are the pids of pid's children: each thread's own list, read
// as threadChildren(tid).
func children(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(threadChildren(t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// threadChildren is the file listing the children of thread tid:
// /proc/<tid>/task/<tid>/children, never /proc/<pid>/task/<tid>/children
// for another thread of process pid. The kernel keeps a dentry for every
// /proc path read; when the process ends, each of its threads drops its
// own while the parent's reap drops /proc/<pid> and everything below it,
// and a reap that meets a thread's dentry still being dropped spins until
// it is gone: 7–11 ms of the reaping host's CPU per process on a loaded
// machine (BenchmarkReapAfterTree), against 0.04 ms with the thread's
// dentries under /proc/<tid>, which the reap does not walk.
func threadChildren(tid string) string { return "/proc/" + tid + "/task/" + tid + "/children" }

// MemTotal is the machine's memory in bytes (/proc/meminfo), 0 when
// unknown.
func MemTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
