// Package gcpace sets how often the host's garbage collector runs: less
// often than Go's default while the live heap is small, Go's default once
// it is large.
//
// The host allocates ~25 KB per message, nearly all of it garbage by the
// end of the turn, over a live heap of a few MB. With GOGC=100 the
// collector then runs every few MB of allocation, and each cycle scans
// every goroutine's stack: in BenchmarkPipeline that was ~20 % of the
// CPU. Letting the heap grow to 5× the live heap (GOGC=400) instead of 2×
// gave +20–27 % messages a second there (+12 % with the ceiling below:
// its 20,000 queued messages make a large live heap), and changed nothing
// idle (the idle host never reaches the heap goal; BenchmarkIdleRSS).
//
// The boost is bounded: after every collection the percentage is set so
// that the next heap goal stays under Ceiling, never above Max and never
// below Go's default 100. A host whose live heap is small (the usual case:
// a few MB) runs at Max; one whose live heap passes Ceiling/5 gets less
// and, from Ceiling/2 on, exactly Go's default — so the peak heap is at
// most max(Ceiling, 2 × live), and the collector never runs more often
// than Go's default would (no memory limit, so no risk of thrashing).
//
// An operator's GOGC (or GOMEMLIMIT) in the environment wins: Start does
// nothing when either is set.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

const (
	// Max is the percentage while the live heap is small (GOGC=400).
	Max = 400
	// Min is Go's default, never gone below.
	Min = 100
	// Ceiling bounds the heap goal the boost may cause: 128 MiB.
	Ceiling = 128 << 20
)

// Percent is the GOGC percentage after a collection that left live bytes
// live: the largest in [Min, Max] whose heap goal, live × (1 + p/100),
// stays within Ceiling.
func Percent(live uint64) int {
	if live == 0 {
		return Max
	}
	if live >= Ceiling {
		return Min
	}
	p := (Ceiling - live) * 100 / live
	return int(min(max(p, Min), Max))
}

var once sync.Once

// Start applies the pacing to this process, unless GOGC or GOMEMLIMIT is
// set in its environment. It is idempotent. It costs nothing while no
// collection runs (an idle host): the percentage is recomputed from a
// cleanup that runs once per collection.
func Start() {
	once.Do(func() { start(os.Getenv) })
}

// start is Start with the environment as a function; it returns the pacer,
// or nil when the environment decides.
func start(getenv func(string) string) *pacer {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	p := &pacer{live: liveHeap, set: debug.SetGCPercent, last: Max}
	debug.SetGCPercent(Max)
	p.arm()
	return p
}

// pacer recomputes the percentage after each collection.
type pacer struct {
	live    func() (uint64, bool)
	set     func(int) int
	last    int
	cycles  atomic.Int64 // collections seen, for tests
	stopped atomic.Bool  // for tests: the next collection does not re-arm
}

// arm makes a piece of garbage whose cleanup runs after the collection
// that finds it unreachable, and arms the next one.
func (p *pacer) arm() {
	s := new([2]*pacer) // with pointers: never in the tiny allocator
	runtime.AddCleanup(s, func(p *pacer) { p.cycle() }, p)
}

func (p *pacer) cycle() {
	if p.stopped.Load() {
		return
	}
	if live, ok := p.live(); ok {
		if pct := Percent(live); pct != p.last {
			p.set(pct)
			p.last = pct
		}
	}
	p.cycles.Add(1)
	p.arm()
}

// liveHeap is the heap the last collection found live.
func liveHeap() (uint64, bool) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}
