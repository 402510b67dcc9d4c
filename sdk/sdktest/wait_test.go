package sdktest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// boundTB is a testing.TB whose deadline is given and whose Fatalf
// records the failure and ends the goroutine, as the real one does.
type boundTB struct {
	testing.TB
	deadline time.Time
	mu       sync.Mutex
	fatal    string
	failed   bool     // set by fail: another goroutine's Errorf
	logs     []string // Logf's lines
}

func (b *boundTB) Helper()                           {}
func (b *boundTB) Deadline() (time.Time, bool)       { return b.deadline, true }
func (b *boundTB) Fatalf(format string, args ...any) { b.record(fmt.Sprintf(format, args...)) }

func (b *boundTB) Logf(format string, args ...any) {
	b.mu.Lock()
	b.logs = append(b.logs, fmt.Sprintf(format, args...))
	b.mu.Unlock()
}

func (b *boundTB) Failed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed
}

func (b *boundTB) fail() {
	b.mu.Lock()
	b.failed = true
	b.mu.Unlock()
}

func (b *boundTB) record(msg string) {
	b.mu.Lock()
	b.fatal = msg
	b.mu.Unlock()
	runtime.Goexit()
}

// run calls f with tb in a goroutine of its own (Fatalf ends it) and
// returns the failure, "" for none.
func (b *boundTB) run(f func(tb testing.TB)) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(b)
	}()
	<-done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fatal
}

// TestWaitFor: a condition that comes true ends the wait; one that stays
// false fails at the bound (the test's deadline less a minute) with what
// was awaited and what the condition last saw; both forms of condition.
func TestWaitFor(t *testing.T) {
	t.Parallel()
	live := &boundTB{deadline: time.Now().Add(time.Hour)}
	calls := 0
	if msg := live.run(func(tb testing.TB) { WaitFor(tb, "three calls", func() bool { calls++; return calls == 3 }) }); msg != "" || calls != 3 {
		t.Errorf("a condition true at the third call: failure %q after %d calls", msg, calls)
	}
	n := 0
	if msg := live.run(func(tb testing.TB) {
		WaitFor(tb, "n at 2", func() error { n++; return Saw(n >= 2, "n is %d", n) })
	}); msg != "" || n != 2 {
		t.Errorf("an error condition nil at the second call: failure %q after %d calls", msg, n)
	}

	past := &boundTB{deadline: time.Now().Add(time.Minute - time.Second)}
	msg := past.run(func(tb testing.TB) { WaitFor(tb, "the answer", func() error { return errors.New("saw 41") }) })
	if !strings.Contains(msg, "the answer") || !strings.Contains(msg, "saw 41") {
		t.Errorf("a condition false at the bound failed with %q; want what was awaited and what it saw", msg)
	}
	past = &boundTB{deadline: time.Now().Add(time.Minute - time.Second)}
	if msg := past.run(func(tb testing.TB) { WaitFor(tb, "never", func() bool { return false }) }); !strings.Contains(msg, "never") {
		t.Errorf("a false condition at the bound failed with %q", msg)
	}
	past = &boundTB{deadline: time.Now().Add(time.Minute - time.Second)}
	if msg := past.run(func(tb testing.TB) { Receive(tb, "a value", make(chan int)) }); !strings.Contains(msg, "a value") {
		t.Errorf("Receive on a silent channel at the bound failed with %q", msg)
	}
	// Failed meanwhile (a process the wait depends on ended, said by
	// another goroutine): the wait gives up long before its bound.
	failing := &boundTB{deadline: time.Now().Add(time.Hour)}
	checks := 0
	msg = failing.run(func(tb testing.TB) {
		WaitFor(tb, "a reply", func() error {
			if checks++; checks == 3 {
				failing.fail()
			}
			return errors.New("no reply yet")
		})
	})
	if !strings.Contains(msg, "a reply") || !strings.Contains(msg, "failed meanwhile") || checks != 3 {
		t.Errorf("a wait in a test that failed meanwhile ended with %q after %d checks", msg, checks)
	}
	ch := make(chan int, 1)
	ch <- 7
	if got := Receive(t, "a value", ch); got != 7 {
		t.Errorf("Receive = %d, want 7", got)
	}
}

// TestWaitBudget: a wait is bounded by WaitBudget however far the test
// binary's deadline is (one flaky wait must not hold the run for its whole
// -timeout), and half way through it says what it waits for and what it
// saw, before it fails with the same.
func TestWaitBudget(t *testing.T) {
	t.Parallel()
	far := &boundTB{deadline: time.Now().Add(30 * time.Minute)}
	if got := time.Until(WaitDeadline(far)); got > WaitBudget || got < WaitBudget-time.Minute {
		t.Errorf("WaitDeadline with the binary's deadline 30 min away is %v away; want WaitBudget (%v)", got, WaitBudget)
	}
	near := &boundTB{deadline: time.Now().Add(time.Minute + 300*time.Millisecond)}
	start := time.Now()
	checks := 0
	msg := near.run(func(tb testing.TB) {
		WaitFor(tb, "the reply", func() error { checks++; return fmt.Errorf("saw %d sends", checks) })
	})
	if !strings.Contains(msg, "the reply") || !strings.Contains(msg, "sends") {
		t.Errorf("the wait failed with %q; want what it awaited and saw", msg)
	}
	near.mu.Lock()
	logs := near.logs
	near.mu.Unlock()
	if len(logs) != 1 || !strings.Contains(logs[0], "still waiting for the reply") || !strings.Contains(logs[0], "sends") {
		t.Errorf("half way the wait logged %q; want one line saying what it waits for and saw", logs)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("a wait bounded at 300 ms took %v", took)
	}
}

// TestStatuses: Wait wakes on a report made while it waits, starts at
// from, and fails at the bound with the reports it saw; Last and All.
func TestStatuses(t *testing.T) {
	t.Parallel()
	var s Statuses
	if s.Last() != (status.Status{}) || s.All() != nil {
		t.Fatalf("a fresh Statuses: last %+v, all %+v", s.Last(), s.All())
	}
	s.Report(status.Status{State: status.Ready, Message: "first"})
	go s.Report(status.Status{State: status.Ready, Message: "second"})
	st, next := s.Wait(t, 1, "the second ready", func(st status.Status) bool { return st.State == status.Ready })
	if st.Message != "second" || next != 2 {
		t.Errorf("Wait from 1 = %+v, %d; want the second report, 2", st, next)
	}
	if s.Last().Message != "second" || len(s.All()) != 2 {
		t.Errorf("Last %+v, All %+v", s.Last(), s.All())
	}
	past := &boundTB{deadline: time.Now().Add(time.Minute - time.Second)}
	msg := past.run(func(tb testing.TB) {
		s.Wait(tb, 0, "a degraded report", func(st status.Status) bool { return st.State == status.Degraded })
	})
	if !strings.Contains(msg, "a degraded report") || !strings.Contains(msg, "second") {
		t.Errorf("Wait at the bound failed with %q; want what was awaited and the reports", msg)
	}
}

// TestLog: writes from several goroutines are all kept; the logger writes
// every level.
func TestLog(t *testing.T) {
	t.Parallel()
	var l Log
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&l, "line %d\n", i)
		}()
	}
	wg.Wait()
	if n := strings.Count(l.String(), "line "); n != 8 {
		t.Errorf("%d of 8 lines kept:\n%s", n, l.String())
	}
	l.Logger().Debug("quiet detail", "k", "v")
	if !strings.Contains(l.String(), "quiet detail") {
		t.Errorf("a debug line is missing:\n%s", l.String())
	}
}

// TestInbox: a call Decide fails keeps nothing and returns its error; Wait
// and WaitCalls wake on deliveries from another goroutine and fail at the
// bound with what they saw.
func TestInbox(t *testing.T) {
	t.Parallel()
	var b Inbox
	refused := errors.New("store locked")
	b.Decide = func(_ context.Context, call int, _ []channel.InboundMessage) error {
		if call == 1 {
			return refused
		}
		return nil
	}
	go func() {
		if err := b.Deliver(context.Background(), channel.InboundMessage{Text: "a"}); !errors.Is(err, refused) {
			t.Errorf("the first call returned %v, want Decide's error", err)
		}
		_ = b.Deliver(context.Background(), channel.InboundMessage{Text: "a"}, channel.InboundMessage{Text: "b"})
	}()
	got := b.Wait(t, 2)
	b.WaitCalls(t, 2)
	if len(got) != 2 || got[0].Text != "a" || b.Calls() != 2 {
		t.Errorf("kept %+v after %d calls; want a, b after 2", got, b.Calls())
	}
	past := &boundTB{deadline: time.Now().Add(time.Minute - time.Second)}
	if msg := past.run(func(tb testing.TB) { b.Wait(tb, 3) }); !strings.Contains(msg, "2 messages kept") {
		t.Errorf("Wait at the bound failed with %q", msg)
	}
}
