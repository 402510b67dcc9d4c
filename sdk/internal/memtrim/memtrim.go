// Package memtrim gives back to the kernel the memory a process touched
// only while it started.
//
// A Go daemon's resident set right after its start is mostly its own
// binary: init functions, configuration parsing, migrations and the first
// connections run code and read tables spread over the whole executable,
// and the kernel maps every page around a touched one (fault-around, 64 KiB
// by default), so most of the text and read-only data ends up mapped. Those
// pages are clean copies of the file: dropping them from the process costs
// nothing (they stay in the page cache) and the few that idle work needs
// come back on their first use. The heap likewise keeps what the start
// allocated and freed until the runtime's background scavenger gets to it.
//
// Trim drops both, once. sdk.Serve calls it a few seconds after a
// plugin's start; clawhost does the same with its copy of this package
// (core/internal/memtrim), which a test there keeps equal to this one. It is safe at any time: only
// mappings of the executable that are not writable are dropped (a writable
// one holds the program's variables), and a dropped page is read back when
// it is used.
package memtrim

import (
	"runtime/debug"
	"time"
)

// StartDelay is how long after its start a process trims: long enough for
// the start's work to be done (a plugin is ready in tens of milliseconds),
// short enough that an operator looking at an idle process sees its
// working set.
const StartDelay = 2 * time.Second

// After trims once, d from now, on a goroutine of its own. A trim that
// fails (no /proc) is not reported: the process only stays bigger.
func After(d time.Duration) {
	time.AfterFunc(d, func() { _, _ = Trim() })
}

// Trim returns the freed heap to the kernel (debug.FreeOSMemory) and drops
// the read-only mappings of the executable from the resident set. It
// returns the number of bytes of mappings it dropped (resident or not);
// on systems other than Linux it only frees the heap and returns 0.
func Trim() (int64, error) {
	debug.FreeOSMemory()
	return dropBinary()
}
