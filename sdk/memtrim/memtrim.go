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
// plugin's start, and clawhost itself a few seconds after its own (one
// package for both, public so that the host may import it; a plugin that
// serves itself without sdk.Serve may call After too). It is safe at any time: only
// mappings of the executable that are not writable are dropped (a writable
// one holds the program's variables), and a dropped page is read back when
// it is used.
//
// After the start, Idle keeps it that way: a collection that comes after
// two minutes without one (the process is idle) is followed by a trim, so
// the heap it freed does not stay resident up to the heap goal.
package memtrim

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// StartDelay is how long after its start a process trims: long enough for
// the start's work to be done (a plugin is ready in tens of milliseconds),
// short enough that an operator looking at an idle process sees its
// working set.
const StartDelay = 2 * time.Second

// IdleGap is how long after the previous collection one must come for
// the process to count as idle. The runtime forces a collection when none
// ran for two minutes; a process that allocates less than its heap goal in
// that time (an idle one: with a small live heap the goal is at least
// 4 MB, 16 MB at the host's GOGC=400) sees only those.
const IdleGap = 100 * time.Second

// After trims once, d from now, on a goroutine of its own, and from then
// on after every collection that follows the previous one by IdleGap or
// more (Idle). A trim that
// fails (no /proc) is not reported: the process only stays bigger.
func After(d time.Duration) {
	time.AfterFunc(d, func() {
		_, _ = Trim()
		Idle()
	})
}

// Trim returns the freed heap to the kernel (debug.FreeOSMemory) and drops
// the read-only mappings of the executable from the resident set. It
// returns the number of bytes of mappings it dropped (resident or not);
// on systems other than Linux it only frees the heap and returns 0.
func Trim() (int64, error) {
	debug.FreeOSMemory()
	return dropBinary()
}

var idleOnce sync.Once

// Idle makes the process trim (Trim) after every collection that comes
// IdleGap or more after the previous one. Left alone, the runtime keeps
// freed pages up to about the heap goal: an idle process's garbage (the
// liveness probes, the long polls), freed by the periodic collection,
// would stay resident for good; and the collection itself reads the
// binary's type and stack tables back in. Under load collections come
// often and this does nothing; idle, it costs one more collection of a
// small heap every two minutes and the page faults of the next idle work.
// It is idempotent and costs nothing between collections.
func Idle() {
	idleOnce.Do(func() {
		w := &idleWatch{now: time.Now, free: func() { _, _ = Trim() }}
		w.last = w.now()
		w.arm()
	})
}

// idleWatch sees every collection and trims after the idle ones.
type idleWatch struct {
	now  func() time.Time
	free func()
	last time.Time // of the previous collection; only cycle touches it
}

// arm makes a piece of garbage whose cleanup runs after the collection
// that finds it unreachable.
func (w *idleWatch) arm() {
	s := new([2]*idleWatch) // with pointers: never in the tiny allocator
	runtime.AddCleanup(s, func(w *idleWatch) { w.cycle() }, w)
}

// cycle runs once per collection, on the runtime's cleanup goroutine: it
// arms the next one and, after an idle gap, trims on a goroutine of its
// own (a collection of its own: its cycle finds no gap).
func (w *idleWatch) cycle() {
	if w.collected(w.now()) {
		go w.free()
	}
	w.arm()
}

// collected records a collection at now and reports whether it came
// IdleGap or more after the previous one.
func (w *idleWatch) collected(now time.Time) bool {
	idle := now.Sub(w.last) >= IdleGap
	w.last = now
	return idle
}
