package memtrim

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestCollectedCountsIdleGaps(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	w := &idleWatch{last: t0}
	for _, c := range []struct {
		after time.Duration // since the previous collection
		idle  bool
	}{
		{time.Second, false},                // under load
		{2*time.Minute + time.Second, true}, // the runtime's periodic one
		{time.Millisecond, false},           // the trim's own collection
		{IdleGap, true},
		{IdleGap - time.Nanosecond, false},
	} {
		t0 = t0.Add(c.after)
		if got := w.collected(t0); got != c.idle {
			t.Errorf("a collection %v after the previous: idle %v, want %v", c.after, got, c.idle)
		}
	}
}

// TestIdleFreesAfterAnIdleCollection: the watch sees a real collection
// and frees the heap when the clock says two minutes went by.
func TestIdleFreesAfterAnIdleCollection(t *testing.T) {
	var mu sync.Mutex
	clock := time.Unix(1000, 0)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	freed := make(chan struct{}, 10)
	w := &idleWatch{now: now, free: func() { freed <- struct{}{} }}
	w.last = now()
	w.arm()
	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()
	deadline := time.After(30 * time.Second)
	for {
		runtime.GC()
		select {
		case <-freed:
			return
		case <-time.After(10 * time.Millisecond): // the cleanup runs after the collection, on its own goroutine
		case <-deadline:
			t.Fatal("no free after an idle collection")
		}
	}
}
