// Package e2e tests the Matrix channel end to end: the real clawhost
// binary runs the real clawhost-matrix plugin against a real homeserver
// (Dendrite, matrixtest) and the real claude CLI against the fake
// Anthropic API; the test's users are mautrix clients. It is a package of
// the matrix module (outside go.work, see its go.mod), so it lives here
// rather than in core/e2e, whose harness it uses.
package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// watcher syncs as one test user and keeps every message event it sees.
type watcher struct {
	cli    *mautrix.Client
	mu     sync.Mutex
	events []*event.Event
	cancel context.CancelFunc
	done   chan struct{}
}

// watch starts syncing as cli until the test ends.
func watch(t *testing.T, cli *mautrix.Client) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{cli: cli, cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	since := ""
	for ctx.Err() == nil {
		r, err := w.cli.SyncRequest(ctx, 5000, since, "", false, event.PresenceOnline)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		since = r.NextBatch
		w.mu.Lock()
		for room, jr := range r.Rooms.Join {
			for _, e := range jr.Timeline.Events {
				if e.Type != event.EventMessage && e.Type != event.EventReaction {
					continue
				}
				e.RoomID = room
				_ = e.Content.ParseRaw(e.Type)
				w.events = append(w.events, e)
			}
		}
		w.mu.Unlock()
	}
}

// from are the message events of sender in room, in order (edits
// included).
func (w *watcher) from(room id.RoomID, sender id.UserID) []*event.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*event.Event
	for _, e := range w.events {
		if e.RoomID == room && e.Sender == sender && e.Type == event.EventMessage {
			out = append(out, e)
		}
	}
	return out
}
