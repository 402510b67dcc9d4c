package sdktest

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Condition is what WaitFor waits for: a func() bool, or a func() error
// that returns nil once the awaited state is here and otherwise says what
// it saw instead (the failure quotes the last).
type Condition interface {
	func() bool | func() error
}

// errNotYet is what a boolean condition saw while false.
var errNotYet = errors.New("the condition was still false")

// WaitFor waits until cond holds, checking it at once and then at short
// intervals: for a state a test cannot be told of (a process's file, an
// HTTP endpoint, a fake server's record). It waits on the event, not for
// a time a fast machine needs: the bound is WaitBudget (or the test
// binary's own deadline less a minute, when that comes first), generous
// enough that a machine busy with other work only makes it slower. Half way
// through it logs what it is waiting for and what cond last saw, so a wait
// that will fail says why while the rest of the run goes on; on the bound
// it fails tb the same way; it gives up sooner once tb has failed (another
// goroutine reported that something the wait depends on ended).
func WaitFor[C Condition](tb testing.TB, what string, cond C) {
	tb.Helper()
	check := asCheck(cond)
	start := time.Now()
	deadline := WaitDeadline(tb)
	halfway := start.Add(deadline.Sub(start) / 2)
	pause := time.Millisecond
	for {
		err := check()
		if err == nil {
			return
		}
		if !halfway.IsZero() && time.Now().After(halfway) {
			tb.Logf("still waiting for %s after %s (gives up at %s): %v", what, time.Since(start).Round(time.Second), deadline.Sub(start).Round(time.Second), err)
			halfway = time.Time{}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s: %v", what, err)
		}
		if tb.Failed() {
			// Failed from another goroutine (a process the test needs
			// ended): what it waits for may never come.
			tb.Fatalf("gave up waiting for %s: the test failed meanwhile (last seen: %v)", what, err)
		}
		// The interval between checks, not a wait for the event: it grows
		// to 50 ms so a long wait does not burn a CPU the host needs.
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Saw is a Condition's error: nil when ok, else what it saw, formatted.
func Saw(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// Receive waits for the next value on ch (or its close), bounded as
// WaitFor is, and returns it.
func Receive[T any](tb testing.TB, what string, ch <-chan T) T {
	tb.Helper()
	timer := time.NewTimer(time.Until(WaitDeadline(tb)))
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		tb.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func asCheck[C Condition](cond C) func() error {
	switch c := any(cond).(type) {
	case func() bool:
		return func() error { return Saw(c(), "%v", errNotYet) }
	case func() error:
		return c
	}
	panic(fmt.Sprintf("WaitFor: condition of type %T", cond))
}

// WaitBudget is the longest one wait of a test may take (WaitFor, Receive,
// the fakes' waits): a wait that cannot end fails after it with what it saw,
// instead of holding the whole test binary until go test's -timeout (a
// 30-minute hang for one flaky wait). Five minutes is far beyond any event a
// test here waits for on a machine busy with two CPU burners beside it.
const WaitBudget = 5 * time.Minute

// WaitDeadline is when a wait that starts now gives up: WaitBudget from
// now, or the test's deadline less a minute (to report it and stop what the
// test started) when that comes first. A wait that hands a bound to
// something else (a context, a server's long poll) takes it from here.
func WaitDeadline(tb testing.TB) time.Time {
	at := time.Now().Add(WaitBudget)
	if dt, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dt.Deadline(); ok && end.Add(-time.Minute).Before(at) {
			return end.Add(-time.Minute)
		}
	}
	return at
}
