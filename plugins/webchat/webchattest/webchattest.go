// Package webchattest drives the webchat channel from tests: Inbox, a
// channel.Inbox that records deliveries; Client, a Go WebSocket client that
// behaves like the page; and Browser, the page itself in headless Chromium.
//
// A host-level test can configure clawhost with a webchat plugin listening
// on 127.0.0.1:<port>, then open the page with NewBrowser(t).Open(url) (or
// NewClient) and play the user. It is support code for tests, not for
// production; it does not import package testing (TB is the part of
// testing.TB it needs).
package webchattest

import (
	"context"
	"sync"

	"github.com/clawhost/clawhost/sdk/channel"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Inbox is a channel.Inbox that acknowledges every message at once and
// queues it on C (buffered). Hold makes Deliver wait until Release, to
// observe the page's "sending" state.
type Inbox struct {
	// C receives every delivered message, in order.
	C chan channel.InboundMessage

	mu   sync.Mutex
	gate chan struct{}
}

// NewInbox returns an Inbox whose C holds up to 256 messages.
func NewInbox() *Inbox {
	return &Inbox{C: make(chan channel.InboundMessage, 256)}
}

// Deliver implements channel.Inbox.
func (in *Inbox) Deliver(ctx context.Context, msgs ...channel.InboundMessage) error {
	in.mu.Lock()
	gate := in.gate
	in.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, m := range msgs {
		select {
		case in.C <- m:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Hold makes later Deliver calls block until Release.
func (in *Inbox) Hold() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.gate == nil {
		in.gate = make(chan struct{})
	}
}

// Release lets held and later Deliver calls through.
func (in *Inbox) Release() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.gate != nil {
		close(in.gate)
		in.gate = nil
	}
}

// Next returns the next delivered message, or ctx's error.
func (in *Inbox) Next(ctx context.Context) (channel.InboundMessage, error) {
	select {
	case m := <-in.C:
		return m, nil
	case <-ctx.Done():
		return channel.InboundMessage{}, ctx.Err()
	}
}
