// Package procpace sets how many processors the host's Go code runs on:
// one while the host is lightly loaded, all that Go would give it once it
// is busy.
//
// A warm turn wakes the host a few times (the plugin's call, the fsync,
// claude's result, the send): each time, with two or more processors,
// the runtime wakes a second thread to look for work, finds little, and
// puts it back to sleep, and its monitor thread polls every 20 µs while
// any processor is out of its idle list. On a virtual machine every such
// sleep and wake-up costs tens of microseconds of CPU. On one processor
// a warm turn made 37–39 context switches instead of 61–66 and cost a
// fifth less CPU (BenchmarkOutboundTelegram, 7 alternating rounds: a
// median of 3.3 against 4.2 ms a turn), and it was no slower. Under a
// heavy load one processor costs throughput even before the host uses a
// whole core: goroutines of many chats wait for it (with GOMAXPROCS=1,
// BenchmarkLoadTelegramWarm went from 388–410 to 334–343 messages a
// second while the host used 0.35–0.5 cores), so the host goes back to
// all of them at a quarter of a core.
//
// The measure is the process's CPU time (user and system, all threads)
// over the wall time since the last look, in cores. Looks cost nothing
// while the host is idle. Work arriving (Busy, called for every batch of
// inbound messages) looks when the last look is MinWindow old or more:
// one getrusage call at most every quarter second, and no timer. A
// garbage collection looks too (a busy host allocates), and while on all
// processors a timer looks every HoldCheck, so that a host whose work
// stopped at once goes back to one. On one processor, a look that
// measures Raise or more goes to all; on all, the host goes back to one
// once every look for Quiet measured less than Lower. The first look
// after a pause measures the pause too, so a burst moves the host on its
// second look, a quarter of a second in.
//
// Going back to one processor is also the moment a burst of work ended:
// Start's settled function runs then (the host's gives the burst's
// garbage back to the kernel: memtrim.Settle).
//
// An operator's GOMAXPROCS in the environment wins: Start does nothing
// when it is set, nor when Go gives the process one processor anyway.
package procpace

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// Raise is the load, in cores, at which the host leaves one processor.
	Raise = 0.25
	// Lower is the load under which it goes back to one.
	Lower = 0.1
	// MinWindow is the shortest span a look measures: calls closer than
	// this to the last look are not one.
	MinWindow = 250 * time.Millisecond
	// Quiet is how long the load must stay under Lower before the host
	// goes back to one processor.
	Quiet = 2 * time.Second
	// HoldCheck is how often a timer looks while on all processors.
	HoldCheck = 2 * time.Second
)

var (
	once   sync.Once
	active atomic.Pointer[pacer] // the started pacer, for Busy
)

// Busy tells the pacer that work arrived; it looks when the last look is
// MinWindow old. Without Start (tests, the CLI) it does nothing.
func Busy() {
	if p := active.Load(); p != nil {
		p.busy()
	}
}

// Procs is how many processors the host's Go code runs on now and, when
// the pacer runs, how many it takes while busy (0 when it does not run),
// for the status page.
func Procs() (now, busy int) {
	if p := active.Load(); p != nil {
		busy = p.busyProcs
	}
	return runtime.GOMAXPROCS(0), busy
}

// Start applies the pacing to this process, unless GOMAXPROCS is set in
// its environment or the process has one processor. It is idempotent.
// Call it after what sizes itself by runtime.GOMAXPROCS(0) at its start
// (the store's readers): that should see every processor. settled, when
// not nil, runs on a goroutine of its own each time the process goes back
// to one processor after a busy spell.
func Start(settled func()) {
	once.Do(func() {
		if p := start(os.Getenv, runtimeProcs{}, cpuTime, time.Now, time.AfterFunc); p != nil {
			if settled != nil {
				p.settled = func() { go settled() } // never under the pacer's lock
			}
			active.Store(p)
		}
	})
}

// procs sets the processors Go code runs on.
type procs interface {
	// One puts Go code on one processor.
	One()
	// All gives it back what Go would give it (the machine's processors,
	// or the container's CPU limit).
	All()
	// Default is how many All gives.
	Default() int
}

// runtimeProcs is procs for this process.
type runtimeProcs struct{}

func (runtimeProcs) One() { runtime.GOMAXPROCS(1) }

func (runtimeProcs) All() { runtime.SetDefaultGOMAXPROCS() }

// Default is read at the start, before One, when GOMAXPROCS is Go's
// default.
func (runtimeProcs) Default() int { return runtime.GOMAXPROCS(0) }

// pacer holds the state between looks.
type pacer struct {
	procs     procs
	cpu       func() (time.Duration, bool)
	now       func() time.Time
	afterFunc func(time.Duration, func()) *time.Timer
	busyProcs int    // what procs.All gives, read at the start
	settled   func() // run when a busy spell ends (Start); nil for none

	epoch    time.Time    // the start: lastNano counts from it on the monotonic clock
	lastNano atomic.Int64 // lastAt − epoch in nanoseconds, for busy's check without the lock

	mu         sync.Mutex
	all        bool // on every processor
	lastCPU    time.Duration
	lastAt     time.Time
	quietSince time.Time   // on all processors: since when every look measured under Lower; zero when the last did not
	timer      *time.Timer // the next look while on all processors
	stopped    bool        // for tests: no more looks
}

// start is Start with its parts given; it returns the pacer, or nil when
// the environment or the machine decides.
func start(getenv func(string) string, p procs, cpu func() (time.Duration, bool), now func() time.Time,
	afterFunc func(time.Duration, func()) *time.Timer) *pacer {
	busy := p.Default()
	if getenv("GOMAXPROCS") != "" || busy <= 1 {
		return nil
	}
	c, ok := cpu()
	if !ok {
		return nil
	}
	at := now()
	pc := &pacer{procs: p, cpu: cpu, now: now, afterFunc: afterFunc, busyProcs: busy, epoch: at, lastCPU: c, lastAt: at}
	p.One()
	pc.armGC()
	return pc
}

// armGC makes a piece of garbage whose cleanup runs after the collection
// that finds it unreachable: a look, and the next one armed.
func (pc *pacer) armGC() {
	s := new([2]*pacer) // with pointers: never in the tiny allocator
	runtime.AddCleanup(s, func(pc *pacer) {
		if pc.look() {
			pc.armGC()
		}
	}, pc)
}

// busy is Busy: a look when the last is MinWindow old.
func (pc *pacer) busy() {
	if int64(pc.now().Sub(pc.epoch))-pc.lastNano.Load() >= int64(MinWindow) {
		pc.look()
	}
}

// look measures the load since the last look and moves between one
// processor and all; it reports false once the pacer is stopped.
func (pc *pacer) look() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.stopped {
		return false
	}
	now := pc.now()
	window := now.Sub(pc.lastAt)
	if window < MinWindow {
		return true
	}
	c, ok := pc.cpu()
	if !ok {
		return true
	}
	load := float64(c-pc.lastCPU) / float64(window)
	pc.lastCPU, pc.lastAt = c, now
	pc.lastNano.Store(int64(now.Sub(pc.epoch)))
	switch {
	case !pc.all && load >= Raise:
		pc.procs.All()
		pc.all = true
		pc.quietSince = time.Time{}
	case pc.all && load >= Lower:
		pc.quietSince = time.Time{}
	case pc.all:
		if pc.quietSince.IsZero() {
			pc.quietSince = now.Add(-window) // quiet since this look's window began
		}
		if now.Sub(pc.quietSince) >= Quiet {
			pc.procs.One()
			pc.all = false
			if pc.settled != nil {
				pc.settled()
			}
		}
	}
	if pc.all && pc.timer == nil {
		pc.timer = pc.afterFunc(HoldCheck, pc.held)
	}
	return true
}

// held is the look while on all processors: it arms the next one while
// the host stays there.
func (pc *pacer) held() {
	pc.mu.Lock()
	pc.timer = nil
	pc.mu.Unlock()
	pc.look()
}
