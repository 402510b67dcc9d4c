// Package tstime is the one clock of the core: an interface every part
// that waits or reads the time takes (tailscale's tstime.Clock shape), the
// real clock, and a fake that tests advance by hand.
//
// The fake never moves by itself. A test advances it with [Fake.Advance];
// timers, tickers and AfterFunc calls whose time has come then fire in
// time order. [Fake.BlockUntil] waits until the code under test has armed
// a given number of timers, so a test advances only after the code is
// waiting — no sleeps.
package tstime

import "time"

// Clock is time as the core sees it.
type Clock interface {
	// Now is time.Now.
	Now() time.Time
	// Since is time.Since.
	Since(t time.Time) time.Duration
	// NewTimer is time.NewTimer: the channel receives once after d.
	NewTimer(d time.Duration) (Timer, <-chan time.Time)
	// NewTicker is time.NewTicker.
	NewTicker(d time.Duration) (Ticker, <-chan time.Time)
	// AfterFunc is time.AfterFunc: f runs in its own goroutine after d
	// unless the timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
	// After is time.After.
	After(d time.Duration) <-chan time.Time
}

// Timer controls a pending timer or AfterFunc call.
type Timer interface {
	// Stop cancels it; it reports whether it was still pending.
	Stop() bool
	// Reset arms it again for d; it reports whether it was still pending.
	Reset(d time.Duration) bool
}

// Ticker controls a ticker.
type Ticker interface {
	Stop()
	Reset(d time.Duration)
}

// Std is the real clock.
type Std struct{}

// Now returns time.Now().
func (Std) Now() time.Time { return time.Now() }

// Since returns time.Since(t).
func (Std) Since(t time.Time) time.Duration { return time.Since(t) }

// NewTimer wraps time.NewTimer.
func (Std) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	t := time.NewTimer(d)
	return t, t.C
}

// NewTicker wraps time.NewTicker.
func (Std) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	t := time.NewTicker(d)
	return t, t.C
}

// AfterFunc wraps time.AfterFunc.
func (Std) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// After wraps time.After.
func (Std) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Or returns c, or the real clock when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return Std{}
	}
	return c
}
