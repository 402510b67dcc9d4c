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
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// watcher syncs as one test user and keeps every message event it sees.
type watcher struct {
	cli *mautrix.Client
	// mach, when set (withCrypto), decrypts what the user is sent.
	mach   *crypto.OlmMachine
	state  mautrix.StateStore
	mu     sync.Mutex
	events []*event.Event
	// pending are encrypted events not decrypted yet.
	pending []*event.Event
	cancel  context.CancelFunc
	done    chan struct{}
}

// watch starts syncing as cli until the test ends; with mach (a device
// of the user's with end-to-end encryption) it decrypts what it can.
func watch(t *testing.T, cli *mautrix.Client, mach ...*crypto.OlmMachine) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{cli: cli, cancel: cancel, done: make(chan struct{})}
	if len(mach) > 0 {
		w.mach = mach[0]
		w.state = mach[0].StateStore.(mautrix.StateStore)
	}
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
		if w.mach != nil {
			for room, jr := range r.Rooms.Join {
				for _, e := range append(append([]*event.Event{}, jr.State.Events...), jr.Timeline.Events...) {
					if e.StateKey != nil {
						e.RoomID = room
						_ = e.Content.ParseRaw(e.Type)
						mautrix.UpdateStateStore(ctx, w.state, e)
					}
				}
			}
			w.mach.ProcessSyncResponse(ctx, r, since)
		}
		since = r.NextBatch
		w.mu.Lock()
		for room, jr := range r.Rooms.Join {
			for _, e := range jr.Timeline.Events {
				if e.Type == event.EventEncrypted && w.mach != nil {
					// Its key may come in a later sync: kept and tried
					// again after each.
					e.RoomID = room
					_ = e.Content.ParseRaw(e.Type)
					w.pending = append(w.pending, e)
					continue
				}
				if e.Type != event.EventMessage && e.Type != event.EventReaction {
					continue
				}
				e.RoomID = room
				_ = e.Content.ParseRaw(e.Type)
				w.events = append(w.events, e)
			}
		}
		var still []*event.Event
		for _, e := range w.pending {
			dec, err := w.mach.DecryptMegolmEvent(ctx, e)
			if err != nil {
				still = append(still, e)
				continue
			}
			dec.RoomID = e.RoomID
			w.events = append(w.events, dec)
		}
		w.pending = still
		w.mu.Unlock()
	}
}

// from are the messages of sender in room as they read now, in the
// order they were first sent: an edit (m.replace) changes the content of
// the message it replaces (its relation, a thread or a reply, stays the
// original's) and is not a message of its own.
func (w *watcher) from(room id.RoomID, sender id.UserID) []*event.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*event.Event
	at := map[id.EventID]int{}
	for _, e := range w.events {
		if e.RoomID != room || e.Sender != sender || e.Type != event.EventMessage {
			continue
		}
		c := e.Content.AsMessage()
		if c != nil && c.RelatesTo != nil && c.RelatesTo.Type == event.RelReplace {
			if i, ok := at[c.RelatesTo.EventID]; ok && c.NewContent != nil {
				nc := *c.NewContent
				nc.RelatesTo = out[i].Content.AsMessage().RelatesTo
				ev := *out[i]
				ev.Content = event.Content{Parsed: &nc}
				out[i] = &ev
			}
			continue
		}
		at[e.ID] = len(out)
		out = append(out, e)
	}
	return out
}
