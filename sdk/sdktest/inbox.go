package sdktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Inbox is a channel.Inbox that keeps what a channel delivers, for testing
// its Run without a host. The zero value is ready.
type Inbox struct {
	// Decide, when set before Run starts, decides the result of each call
	// (call counts from 1) before the messages are kept: a call it fails
	// returns its error and keeps nothing, as a host that could not store.
	Decide func(ctx context.Context, call int, msgs []channel.InboundMessage) error

	mu      sync.Mutex
	calls   int
	stored  []channel.InboundMessage
	changed changes
}

var _ channel.Inbox = (*Inbox)(nil)

// Deliver implements channel.Inbox.
func (b *Inbox) Deliver(ctx context.Context, msgs ...channel.InboundMessage) error {
	b.mu.Lock()
	b.calls++
	call, decide := b.calls, b.Decide
	b.changed.notify()
	b.mu.Unlock()
	if decide != nil {
		if err := decide(ctx, call, msgs); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stored = append(b.stored, msgs...)
	b.changed.notify()
	return nil
}

// Stored returns the messages kept so far, in order.
func (b *Inbox) Stored() []channel.InboundMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]channel.InboundMessage(nil), b.stored...)
}

// Calls counts the calls of Deliver so far, failed ones included.
func (b *Inbox) Calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// Wait waits until at least n messages are kept and returns them, bounded
// as WaitFor is.
func (b *Inbox) Wait(t testing.TB, n int) []channel.InboundMessage {
	t.Helper()
	b.await(t, "messages kept", func() bool { return len(b.stored) >= n })
	return b.Stored()
}

// WaitCalls waits until Deliver was called at least n times.
func (b *Inbox) WaitCalls(t testing.TB, n int) {
	t.Helper()
	b.await(t, "calls of Deliver", func() bool { return b.calls >= n })
}

// await waits, waking on each call and each kept message, until done
// (called with b.mu held) holds.
func (b *Inbox) await(t testing.TB, what string, done func() bool) {
	t.Helper()
	timer := time.NewTimer(time.Until(WaitDeadline(t)))
	defer timer.Stop()
	for {
		b.mu.Lock()
		if done() {
			b.mu.Unlock()
			return
		}
		ch := b.changed.next()
		calls, kept := b.calls, len(b.stored)
		b.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s: %d calls, %d messages kept", what, calls, kept)
			return
		}
	}
}

// Run runs ch with inbox in the background until the returned stop is
// called (or the test ends, whichever first) and returns Run's result;
// Run not returning within StopTimeout of the cancel fails t.
func Run(t testing.TB, ch channel.Channel, inbox channel.Inbox) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, inbox) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(StopTimeout):
				t.Errorf("Run did not return within %s of the cancel", StopTimeout)
			}
		})
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// RunOK is Run for a test that expects Run to end without an error: it
// runs ch with inbox until the returned stop is called or the test ends,
// and a Run error is reported with t.Errorf (once).
func RunOK(t testing.TB, ch channel.Channel, inbox channel.Inbox) (stop func()) {
	t.Helper()
	stopRun := Run(t, ch, inbox)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := stopRun(); err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
