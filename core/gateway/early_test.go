package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// heldSync is a store whose accepts are committed at once and durable
// when the test says: each synced waits for an error on sync.
type heldSync struct {
	store.Store
	sync chan error
}

func (h heldSync) AcceptEarly(ctx context.Context, in store.Inbound) (store.AcceptResult, func() error, error) {
	res, synced, err := store.AcceptEarly(ctx, h.Store, in)
	if err != nil {
		return res, synced, err
	}
	return res, func() error {
		if err := synced(); err != nil {
			return err
		}
		return <-h.sync
	}, nil
}

// inbound runs g.Inbound in the background; its result arrives on the
// channel returned.
func inbound(g *Gateway, msgs ...channel.InboundMessage) chan error {
	ch := make(chan error, 1)
	go func() { ch <- g.Inbound(context.Background(), "tg", msgs) }()
	return ch
}

func waitErr(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}

// TestTurnStartsBeforeTheAcceptIsDurable: a message goes to its turn once
// the journal committed it, while the fsync that lets the plugin ack it
// still runs; the plugin's call returns only after that fsync, with its
// error when it failed, and the message is answered once all the same
// (the redelivery the nack brings is a duplicate).
func TestTurnStartsBeforeTheAcceptIsDurable(t *testing.T) {
	sync := make(chan error)
	g, ports, agent := inproc(t, nil, func(o *Options) { o.Store = heldSync{o.Store, sync} })

	call := inbound(g, dmFrom("5", "first hold"))
	select {
	case <-agent.held:
	case err := <-call:
		t.Fatalf("the plugin's call returned (%v) before the turn started", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not start while the accept's fsync ran")
	}
	select {
	case err := <-call:
		t.Fatalf("the plugin's call returned (%v) before the accept was durable", err)
	default:
	}
	sync <- nil
	if err := waitErr(t, "the plugin's call", call); err != nil {
		t.Fatal(err)
	}
	agent.release <- struct{}{}
	seen := 0
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "first hold") {
		t.Fatalf("reply %q", got)
	}

	// The fsync fails: the call fails (the plugin nacks), the turn runs.
	m := dmFrom("5", "second")
	call = inbound(g, m)
	sync <- errors.New("fsync: input/output error")
	if err := waitErr(t, "the plugin's call", call); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("the call after a failed fsync: %v", err)
	}
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "second") {
		t.Fatalf("reply %q", got)
	}
	// The redelivery is a duplicate: acked once durable, not answered.
	call = inbound(g, m)
	sync <- nil
	if err := waitErr(t, "the redelivery's call", call); err != nil {
		t.Fatal(err)
	}
	third := inbound(g, dmFrom("5", "third"))
	sync <- nil
	if err := waitErr(t, "the third call", third); err != nil {
		t.Fatal(err)
	}
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "third") {
		t.Fatalf("reply %q after the redelivery, want the third message's", got)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.prompts) != 3 {
		t.Fatalf("%d turns, want 3: %q", len(agent.prompts), agent.prompts)
	}
}
