// Package tstimetest is the fake of the core's clock (core/internal/tstime)
// for tests: it moves only when a test advances it, and tells how many
// timers wait on it.
package tstimetest

import (
	"github.com/clawhost/clawhost/core/internal/tstime"
	"sort"
	"sync"
	"time"
)

// Fake is a clock that moves only when a test advances it. It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	seq     int
	waiters []*fakeTimer
	// armed is signalled whenever a timer is armed, for BlockUntil.
	armed *sync.Cond
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake {
	f := &Fake{now: start}
	f.armed = sync.NewCond(&f.mu)
	return f
}

// Now returns the fake's time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since returns the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// NewTimer arms a timer that fires when the fake reaches now+d.
func (f *Fake) NewTimer(d time.Duration) (tstime.Timer, <-chan time.Time) {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	f.arm(t, d)
	return t, t.c
}

// NewTicker arms a ticker that fires every d of fake time. Like a real
// ticker it drops ticks the reader is not ready for.
func (f *Fake) NewTicker(d time.Duration) (tstime.Ticker, <-chan time.Time) {
	if d <= 0 {
		panic("tstime: non-positive interval for NewTicker")
	}
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), period: d}
	f.arm(t, d)
	return fakeTicker{t}, t.c
}

// AfterFunc arms f to run in its own goroutine when the fake reaches now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) tstime.Timer {
	t := &fakeTimer{f: f, fn: fn}
	f.arm(t, d)
	return t
}

// After is NewTimer's channel.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	_, c := f.NewTimer(d)
	return c
}

// Advance moves the fake forward by d, firing everything that comes due on
// the way, in time order (each tick of a ticker at its own time).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.advanceTo(f.now.Add(d))
	f.mu.Unlock()
}

// Set moves the fake to t (never backwards), firing what comes due.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	if t.After(f.now) {
		f.advanceTo(t)
	}
	f.mu.Unlock()
}

// Waiters counts the armed timers, tickers and AfterFunc calls.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil returns once at least n timers, tickers or AfterFunc calls
// are armed, or false when the real timeout passes first (the code under
// test never got to wait).
func (f *Fake) BlockUntil(n int, timeout time.Duration) bool {
	expired := false
	stop := time.AfterFunc(timeout, func() {
		f.mu.Lock()
		expired = true
		f.mu.Unlock()
		f.armed.Broadcast()
	})
	defer stop.Stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.waiters) < n && !expired {
		f.armed.Wait()
	}
	return len(f.waiters) >= n
}

// advanceTo fires, in order, everything due up to t. f.mu is held.
func (f *Fake) advanceTo(t time.Time) {
	for {
		sort.SliceStable(f.waiters, func(i, j int) bool {
			a, b := f.waiters[i], f.waiters[j]
			if !a.when.Equal(b.when) {
				return a.when.Before(b.when)
			}
			return a.seq < b.seq
		})
		if len(f.waiters) == 0 || f.waiters[0].when.After(t) {
			break
		}
		w := f.waiters[0]
		f.waiters = f.waiters[1:]
		if w.when.After(f.now) {
			f.now = w.when
		}
		w.fire(f.now)
		if w.period > 0 {
			w.when = w.when.Add(w.period)
			f.insert(w)
		}
	}
	f.now = t
}

func (f *Fake) arm(t *fakeTimer, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.when = f.now.Add(d)
	f.insert(t)
	if d <= 0 {
		f.advanceTo(f.now)
	}
}

func (f *Fake) insert(t *fakeTimer) {
	f.seq++
	t.seq = f.seq
	f.waiters = append(f.waiters, t)
	f.armed.Broadcast()
}

// remove disarms t; it reports whether t was armed. f.mu is held.
func (f *Fake) remove(t *fakeTimer) bool {
	for i, w := range f.waiters {
		if w == t {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return true
		}
	}
	return false
}

type fakeTimer struct {
	f      *Fake
	when   time.Time
	seq    int
	period time.Duration
	c      chan time.Time
	fn     func()
}

// fire delivers one tick; f.mu is held. A channel that is full drops the
// tick, as a real ticker does.
func (t *fakeTimer) fire(now time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- now:
	default:
	}
}

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.remove(t)
}

func (t *fakeTimer) Reset(d time.Duration) bool { return t.reset(d, t.period) }

// reset arms t again for d with the given ticker period (0: a timer).
func (t *fakeTimer) reset(d, period time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.f.remove(t)
	t.period = period
	t.when = t.f.now.Add(d)
	t.f.insert(t)
	if d <= 0 {
		t.f.advanceTo(t.f.now)
	}
	return was
}

type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) Stop() { k.t.Stop() }

func (k fakeTicker) Reset(d time.Duration) { k.t.reset(d, d) }
