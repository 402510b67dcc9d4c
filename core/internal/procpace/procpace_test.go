package procpace

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// fakeProcs records what the pacer set.
type fakeProcs struct {
	def   int
	set   []int
	procs int
}

func (f *fakeProcs) One()         { f.set = append(f.set, 1); f.procs = 1 }
func (f *fakeProcs) All()         { f.set = append(f.set, f.def); f.procs = f.def }
func (f *fakeProcs) Default() int { return f.def }

// rig is a pacer on a fake clock, a fake CPU clock and a fake timer.
type rig struct {
	t     *testing.T
	procs *fakeProcs
	now   time.Time
	cpu   time.Duration
	reads int    // how often the pacer read the CPU time
	timer func() // the armed look, nil when none
	p     *pacer
}

func newRig(t *testing.T, env map[string]string, def int) *rig {
	r := &rig{t: t, procs: &fakeProcs{def: def, procs: def}, now: time.Unix(1_000_000, 0)}
	r.p = start(func(k string) string { return env[k] }, r.procs,
		func() (time.Duration, bool) { r.reads++; return r.cpu, true },
		func() time.Time { return r.now },
		func(d time.Duration, f func()) *time.Timer {
			if d != HoldCheck {
				t.Errorf("look armed in %v, want %v", d, HoldCheck)
			}
			if r.timer != nil {
				t.Error("a second look armed while one is pending")
			}
			r.timer = f
			return time.NewTimer(time.Hour)
		})
	if r.p != nil {
		t.Cleanup(r.p.stop)
	}
	return r
}

// run advances the clocks: over d of wall time the process used load
// cores.
func (r *rig) run(d time.Duration, load float64) {
	r.now = r.now.Add(d)
	r.cpu += time.Duration(load * float64(d))
}

// fire runs the armed look.
func (r *rig) fire() {
	r.t.Helper()
	f := r.timer
	if f == nil {
		r.t.Fatal("no look armed")
	}
	r.timer = nil
	f()
}

func TestStartPutsTheHostOnOneProcessor(t *testing.T) {
	r := newRig(t, nil, 4)
	if r.p == nil || r.procs.procs != 1 {
		t.Fatalf("after start: pacer %v, procs %d; want one processor", r.p, r.procs.procs)
	}
	if r.timer != nil {
		t.Error("a timer armed on one processor: an idle host would wake for it")
	}
}

func TestOperatorOrMachineDecides(t *testing.T) {
	if r := newRig(t, map[string]string{"GOMAXPROCS": "2"}, 4); r.p != nil || len(r.procs.set) != 0 {
		t.Errorf("GOMAXPROCS set: pacer %v, set %v; want nothing touched", r.p, r.procs.set)
	}
	if r := newRig(t, nil, 1); r.p != nil || len(r.procs.set) != 0 {
		t.Errorf("one processor anyway: pacer %v, set %v; want nothing touched", r.p, r.procs.set)
	}
}

func TestBusyGoesToAllAndBack(t *testing.T) {
	r := newRig(t, nil, 4)
	// A light load: a turn every few seconds, a collection now and then.
	r.run(30*time.Second, 0.02)
	r.p.look()
	if r.procs.procs != 1 || r.timer != nil {
		t.Fatalf("light load: procs %d, timer armed %v; want 1, none", r.procs.procs, r.timer != nil)
	}
	// A burst: the next collection sees more than Raise cores.
	r.run(time.Second, 0.9)
	r.p.look()
	if r.procs.procs != 4 {
		t.Fatalf("busy: procs %d, want all 4", r.procs.procs)
	}
	// Still busy at the held look: stays, and looks again later.
	r.run(HoldCheck, 1.4)
	r.fire()
	if r.procs.procs != 4 || r.timer == nil {
		t.Fatalf("still busy: procs %d, next look armed %v; want 4, armed", r.procs.procs, r.timer != nil)
	}
	// Between Lower and Raise: stays (hysteresis).
	r.run(HoldCheck, (Lower+Raise)/2)
	r.fire()
	if r.procs.procs != 4 {
		t.Fatalf("load between the bounds: procs %d, want 4", r.procs.procs)
	}
	// The load falls: back to one, and no timer left behind.
	r.run(HoldCheck, 0.05)
	r.fire()
	if r.procs.procs != 1 || r.timer != nil {
		t.Fatalf("load fell: procs %d, timer armed %v; want 1, none", r.procs.procs, r.timer != nil)
	}
	if want := []int{1, 4, 1}; !slices.Equal(r.procs.set, want) {
		t.Errorf("set %v, want %v", r.procs.set, want)
	}
}

func TestSettledWhenABurstEnds(t *testing.T) {
	r := newRig(t, nil, 2)
	settled := 0
	r.p.settled = func() { settled++ }
	burst := func() {
		r.run(time.Second, 0.9)
		r.p.look()
		if r.procs.procs != 2 {
			t.Fatal("the burst did not move the host to all processors")
		}
		for r.procs.procs != 1 {
			r.run(HoldCheck, 0.01)
			r.fire()
		}
	}
	burst()
	if settled != 1 {
		t.Fatalf("after a burst ended: settled %d times, want 1", settled)
	}
	// Light work on one processor settles nothing.
	r.run(time.Second, 0.05)
	r.p.look()
	if settled != 1 {
		t.Fatalf("light work on one processor: settled %d times, want 1", settled)
	}
	burst()
	if settled != 2 {
		t.Fatalf("after the second burst: settled %d times, want 2", settled)
	}
}

func TestBusyLooksAtMostEveryWindow(t *testing.T) {
	r := newRig(t, nil, 2)
	reads := r.reads
	// Messages every 10 ms: a look each MinWindow, not one per message.
	for range 100 { // one second
		r.run(10*time.Millisecond, 0.05)
		r.p.busy()
	}
	if n := r.reads - reads; n != 4 {
		t.Errorf("%d looks in a second of messages 10 ms apart, want 4", n)
	}
	Busy() // without Start: nothing, no panic
}

func TestBurstAfterAPause(t *testing.T) {
	r := newRig(t, nil, 2)
	// Ten minutes idle, then a burst of a full core. The first look's
	// window holds the pause: 0.25 s of work over 600 s, no move.
	r.run(10*time.Minute, 0)
	r.run(MinWindow, 1)
	r.p.busy()
	if r.procs.procs != 1 {
		t.Fatalf("first look after the pause: procs %d, want 1", r.procs.procs)
	}
	// The second measures only the burst.
	r.run(MinWindow, 1)
	r.p.busy()
	if r.procs.procs != 2 {
		t.Fatalf("second look into the burst: procs %d, want 2", r.procs.procs)
	}
	// A quarter-second lull inside the burst does not go back to one:
	// the load must stay under Lower for Quiet.
	r.run(MinWindow, 0.05)
	r.p.busy()
	r.run(MinWindow, 0.9)
	r.p.busy()
	for range int(Quiet/MinWindow) - 1 {
		r.run(MinWindow, 0.05)
		r.p.busy()
	}
	if r.procs.procs != 2 {
		t.Fatalf("after %v of low load: procs %d, want still 2", Quiet-MinWindow, r.procs.procs)
	}
	r.run(MinWindow, 0.05)
	r.p.busy()
	if r.procs.procs != 1 {
		t.Fatalf("after %v of low load: procs %d, want 1", Quiet, r.procs.procs)
	}
}

func TestCloseCollectionsAreOneLook(t *testing.T) {
	r := newRig(t, nil, 2)
	r.run(time.Second, 0.01)
	r.p.look()
	// A short spike between two collections 10 ms apart: too short a
	// window to go by; it counts in the next look's.
	r.run(10*time.Millisecond, 1)
	r.p.look()
	if r.procs.procs != 1 {
		t.Fatalf("a 10 ms window moved the host to %d processors", r.procs.procs)
	}
	r.run(MinWindow, 0.1)
	r.p.look() // (10 ms × 1 + 250 ms × 0.1) ÷ 260 ms = 0.13 cores
	if r.procs.procs != 1 {
		t.Fatalf("0.13 cores moved the host to %d processors", r.procs.procs)
	}
}

func TestCollectionsDriveLooks(t *testing.T) {
	// The real runtime: a pacer armed on the collector looks at each
	// collection. It stops before it could set anything that matters.
	fp := &fakeProcs{def: 2, procs: 2}
	looks := make(chan struct{}, 16)
	var now time.Time
	p := start(func(string) string { return "" }, fp,
		func() (time.Duration, bool) { looks <- struct{}{}; return 0, true },
		func() time.Time { now = now.Add(time.Second); return now },
		time.AfterFunc)
	defer p.stop()
	<-looks // start's own reading
	deadline := time.After(time.Minute)
	for n := 0; n < 2; {
		runtime.GC()
		select {
		case <-looks:
			n++
		case <-deadline:
			t.Fatalf("%d looks in a minute of collections, want 2", n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop ends the looks (tests).
func (pc *pacer) stop() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.stopped = true
	if pc.timer != nil {
		pc.timer.Stop()
		pc.timer = nil
	}
}
