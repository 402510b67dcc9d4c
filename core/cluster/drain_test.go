package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// TestGracefulStopFinishesRelayedSends (issue 85): a host that stops
// gracefully while it makes a send relayed for another host finishes the
// send and stores its outcome before it leaves: the sender learns that
// the reply arrived, and tells no one a part "may be missing". (It was
// cut with the serving loop's context, or by the plugins' stop, and came
// back uncertain or not sent.)
func TestGracefulStopFinishesRelayedSends(t *testing.T) {
	w := newRelayWorld(t)
	started := make(chan string, 4)
	w.port.mu.Lock()
	w.port.blocked, w.port.started = true, started
	w.port.mu.Unlock()
	ctx := context.Background()
	done := make(chan error, 1)
	var resp channel.SendResponse
	go func() {
		done <- w.a.call(ctx, "tg", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "in flight"}}, &resp)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the holder never made the send")
	}
	// B stops gracefully: it stops serving while the plugin is still
	// sending, and the plugin's send then completes.
	w.cancel()
	close(w.port.block)
	select {
	case err := <-done:
		if err != nil || len(resp.MessageIDs) != 1 {
			t.Fatalf("a relayed send the stopping holder completed: %+v, %v; want its message id", resp, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sender still waits for the stopped holder")
	}
	if got := w.port.sends(); len(got) != 1 {
		t.Fatalf("the holder made %v; want the one send", got)
	}
}

// TestDrainCutsWhatOutlivesTheGracePeriod: a relayed send still running
// when the graceful stop's grace period ends is cut, and its sender takes
// it as uncertain (it may have reached the chat; never sent again, never
// "not sent").
func TestDrainCutsWhatOutlivesTheGracePeriod(t *testing.T) {
	w := newRelayWorld(t)
	started := make(chan string, 4)
	w.port.mu.Lock()
	w.port.blocked, w.port.started = true, started
	w.port.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		var resp channel.SendResponse
		done <- w.a.call(context.Background(), "tg", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "in flight"}}, &resp)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the holder never made the send")
	}
	over, cancel := context.WithCancel(context.Background())
	cancel() // the grace period is over
	w.b.drain(over)
	select {
	case err := <-done:
		if channel.CodeOf(err) != channel.CodeUncertain {
			t.Fatalf("a relayed send cut at the end of the grace period: %v; want uncertain", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sender still waits")
	}
	if got := w.port.sends(); len(got) != 1 {
		t.Fatalf("the holder made %v", got)
	}
}
