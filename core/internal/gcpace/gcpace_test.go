package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, Max},
		{4 << 20, Max},
		{Ceiling / 5, Max},       // goal 5 × live = Ceiling
		{Ceiling/5 + 1, Max - 1}, // just over: the boost starts to shrink
		{Ceiling / 4, 300},       // goal 4 × live
		{Ceiling / 3, 200},       // goal 3 × live
		{Ceiling / 2, Min},       // goal 2 × live: Go's default
		{Ceiling, Min},           // never below Go's default
		{10 * Ceiling, Min},
	} {
		if got := Percent(c.live); got != c.want {
			t.Errorf("Percent(%d) = %d, want %d", c.live, got, c.want)
		}
		// The goal stays within the ceiling unless Go's default alone passes it.
		if goal := c.live * uint64(100+Percent(c.live)) / 100; goal > Ceiling && Percent(c.live) != Min {
			t.Errorf("live %d: goal %d over the ceiling", c.live, goal)
		}
	}
}

func TestEnvironmentWins(t *testing.T) {
	for _, env := range []map[string]string{{"GOGC": "100"}, {"GOGC": "off"}, {"GOMEMLIMIT": "1GiB"}} {
		if p := start(func(k string) string { return env[k] }); p != nil {
			t.Errorf("env %v: paced anyway", env)
		}
	}
}

func TestCycleSetsOnlyChanges(t *testing.T) {
	var set []int
	live := uint64(1 << 20)
	p := &pacer{live: func() (uint64, bool) { return live, true }, set: func(n int) int { set = append(set, n); return 0 }, last: Max}
	p.cycle() // small heap: stays at Max, no call
	live = Ceiling / 3
	p.cycle()
	p.cycle() // unchanged: no call
	live = Ceiling
	p.cycle()
	if want := []int{200, Min}; len(set) != len(want) || set[0] != want[0] || set[1] != want[1] {
		t.Fatalf("SetGCPercent calls %v, want %v", set, want)
	}
}

// TestPacesEveryCollection runs the real pacer: it raises GOGC and is
// called again after every collection.
func TestPacesEveryCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	p := start(func(string) string { return "" })
	if p == nil {
		t.Fatal("not started with an empty environment")
	}
	defer p.stopped.Store(true)
	if got := debug.SetGCPercent(Max); got != Max {
		t.Fatalf("GOGC after start = %d, want %d", got, Max)
	}
	for i := 0; p.cycles.Load() < 3; i++ {
		if i == 10_000 {
			t.Fatalf("%d collections seen after %d runtime.GC calls", p.cycles.Load(), i)
		}
		runtime.GC()
		runtime.Gosched()
	}
}
