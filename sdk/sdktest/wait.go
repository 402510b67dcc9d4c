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
// a time a fast machine needs: the bound is the test binary's own deadline
// (go test -timeout) less a minute to report what was awaited and stop
// what the test started, so a machine busy with other work only makes it
// slower. On the bound it fails tb with what and what cond last saw; it
// gives up sooner, the same way, once tb has failed (another goroutine
// reported that something the wait depends on ended).
func WaitFor[C Condition](tb testing.TB, what string, cond C) {
	tb.Helper()
	check := asCheck(cond)
	deadline := WaitDeadline(tb)
	pause := time.Millisecond
	for {
		err := check()
		if err == nil {
			return
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

// WaitDeadline is when WaitFor gives up: the test's deadline less a
// minute (to report it and stop what the test started), else ten minutes
// from now. A wait that hands a bound to something else (a context, a
// server's long poll) takes it from here.
func WaitDeadline(tb testing.TB) time.Time {
	if dt, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if at, ok := dt.Deadline(); ok {
			return at.Add(-time.Minute)
		}
	}
	return time.Now().Add(10 * time.Minute)
}
