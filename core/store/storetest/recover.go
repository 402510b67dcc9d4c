package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// recoverFixture is a journal with an entry in every state Recover
// treats differently, left by a store that was then closed (the crash).
type recoverFixture struct {
	accepted, queued, once, noKey, twice, stale, fresh, done int64
}

// setUpRecover builds the fixture, closes the store and advances the clock
// so that stale's reply is 16 minutes old and fresh's 6.
func setUpRecover(t *testing.T, h *env) recoverFixture {
	ctx := context.Background()
	d := h.open()
	var f recoverFixture
	// "twice" was already re-run once before this crash: started,
	// interrupted, recovered after a restart and started again.
	f.twice = MustAccept(t, d, Msg(5)) // processing, attempt 2 → failed
	d.Enqueue(ctx, f.twice, "s")
	d.Start(ctx, f.twice)
	d.MarkBegan(ctx, f.twice)
	d.Close()
	d = h.open()
	if _, err := d.Recover(ctx, store.RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(ctx, f.twice); err != nil {
		t.Fatal(err)
	}
	d.MarkBegan(ctx, f.twice)
	f.accepted = MustAccept(t, d, Msg(1))
	f.queued = MustAccept(t, d, Msg(2))
	d.Enqueue(ctx, f.queued, "s")
	f.once = MustAccept(t, d, Msg(3)) // processing, attempt 1 → re-queued
	d.Enqueue(ctx, f.once, "s")
	d.Start(ctx, f.once)
	d.MarkBegan(ctx, f.once)
	f.noKey = MustAccept(t, d, Msg(4)) // processing without session → accepted
	d.Start(ctx, f.noKey)
	f.stale = MustAccept(t, d, Msg(6))
	d.Start(ctx, f.stale)
	d.RecordReply(ctx, store.Reply{JournalID: f.stale, Text: "old", Chunks: []string{"old"}})
	h.clk.Advance(10 * time.Minute)
	f.fresh = MustAccept(t, d, Msg(7))
	d.Start(ctx, f.fresh)
	d.RecordReply(ctx, store.Reply{JournalID: f.fresh, Text: "xy", Chunks: []string{"x", "y"}})
	d.MarkSent(ctx, store.ChunkSent{JournalID: f.fresh, Index: 0, PlatformIDs: []string{"1"}})
	f.done = MustAccept(t, d, Msg(8))
	d.Finish(ctx, store.FinishRequest{IDs: []int64{f.done}, State: store.StateDone})
	d.Close()
	h.clk.Advance(6 * time.Minute) // stale is 16 min old, fresh 6 min
	return f
}

func ids(es []store.Entry) []int64 {
	var out []int64
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// testRecover: the recovery rules of the package documentation, after a
// restart.
func testRecover(t *testing.T, h *env) {
	f := setUpRecover(t, h)
	ctx := context.Background()
	d := h.open()
	rec, err := d.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ids(rec.Resume)), fmt.Sprint([]int64{f.accepted, f.queued, f.once, f.noKey}); got != want {
		t.Fatalf("Resume = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(ids(rec.Failed)), fmt.Sprint([]int64{f.twice}); got != want {
		t.Fatalf("Failed = %s, want %s", got, want)
	}
	if len(rec.Deliver) != 1 || rec.Deliver[0].Entry.ID != f.fresh || len(rec.Deliver[0].Unsent()) != 1 || rec.Deliver[0].Unsent()[0].Text != "y" {
		t.Fatalf("Deliver = %+v", rec.Deliver)
	}
	if len(rec.Stale) != 1 || rec.Stale[0].Entry.ID != f.stale || rec.Stale[0].Entry.State != store.StateFailed {
		t.Fatalf("Stale = %+v", rec.Stale)
	}
	wantStates := map[int64]store.State{f.accepted: store.StateAccepted, f.queued: store.StateQueued, f.once: store.StateQueued, f.noKey: store.StateAccepted,
		f.twice: store.StateFailed, f.stale: store.StateFailed, f.fresh: store.StateReplied, f.done: store.StateDone}
	for id, want := range wantStates {
		if e, _ := d.Entry(ctx, id); e.State != want {
			t.Errorf("entry %d = %s, want %s", id, e.State, want)
		}
	}
	if e, _ := d.Entry(ctx, f.once); e.Attempts != 1 {
		t.Errorf("re-queued attempts = %d, want 1", e.Attempts)
	}
	recoverAgain(t, d, f)
}

// recoverAgain continues testRecover: idempotence, the second
// interruption, MaxAttempts 1 and a custom stale bound.
func recoverAgain(t *testing.T, d store.Store, f recoverFixture) {
	ctx := context.Background()
	// Idempotent: a second Recover finds the same work, nothing newly failed.
	rec2, err := d.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec2.Resume) != 4 || len(rec2.Deliver) != 1 || len(rec2.Stale) != 0 || len(rec2.Failed) != 0 {
		t.Fatalf("second Recover = %+v", rec2)
	}
	// The re-run: attempt 2, interrupted again → failed.
	d.Start(ctx, f.once)
	d.MarkBegan(ctx, f.once)
	rec3, _ := d.Recover(ctx, store.RecoverOptions{})
	if len(rec3.Failed) != 1 || rec3.Failed[0].ID != f.once {
		t.Fatalf("interrupted twice: Failed = %+v", rec3.Failed)
	}
	// MaxAttempts 1: no retry at all.
	x := MustAccept(t, d, Msg(9))
	d.Start(ctx, x)
	d.MarkBegan(ctx, x)
	rec4, _ := d.Recover(ctx, store.RecoverOptions{MaxAttempts: 1})
	if len(rec4.Failed) != 1 || rec4.Failed[0].ID != x {
		t.Fatalf("MaxAttempts 1: Failed = %+v", rec4.Failed)
	}
	// A custom stale bound.
	rec5, _ := d.Recover(ctx, store.RecoverOptions{StaleAfter: time.Minute})
	if len(rec5.Stale) != 1 || rec5.Stale[0].Entry.ID != f.fresh {
		t.Fatalf("StaleAfter 1m: Stale = %+v", rec5.Stale)
	}
}

// testPrune: only terminal entries finished before the cutoff go, with
// their replies. (That their chunks go too is checked by each engine: no
// method reads a chunk without its reply.)
func testPrune(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	old := MustAccept(t, d, Msg(1))
	d.Start(ctx, old)
	d.RecordReply(ctx, store.Reply{JournalID: old, Text: "a", Chunks: []string{"a"}})
	d.MarkSent(ctx, store.ChunkSent{JournalID: old, Index: 0})
	open := MustAccept(t, d, Msg(2))
	clk.Advance(time.Hour)
	recent := MustAccept(t, d, Msg(3))
	d.Finish(ctx, store.FinishRequest{IDs: []int64{recent}, State: store.StateDropped})
	n, err := d.Prune(ctx, clk.Now().Add(-time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if _, err := d.Entry(ctx, old); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("old entry not pruned")
	}
	if _, err := d.PendingReply(ctx, old); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("old reply not pruned")
	}
	for _, id := range []int64{open, recent} {
		if _, err := d.Entry(ctx, id); err != nil {
			t.Fatalf("entry %d pruned: %v", id, err)
		}
	}
}

// testReopenKeepsState: Close is idempotent, writes after it fail with
// ErrClosed, and a restart keeps the journal, the queue, sessions, pairing
// and dedupe keys.
func testReopenKeepsState(t *testing.T, h *env) {
	ctx := context.Background()
	d := h.open()
	id := MustAccept(t, d, Msg(1))
	d.Enqueue(ctx, id, "s")
	PutSession(t, d, store.Session{Key: "s", ClaudeSessionID: "u"})
	r, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "1"})
	d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "2"})
	d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := d.Accept(ctx, Msg(2)); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}

	d = h.open()
	if e, err := d.Entry(ctx, id); err != nil || e.State != store.StateQueued || e.SessionKey != "s" {
		t.Fatalf("entry after reopen = %+v, %v", e, err)
	}
	if p, _ := d.ListPending(ctx, "s", 0); len(p) != 1 {
		t.Fatal("queue lost on reopen")
	}
	if s, err := d.Session(ctx, "s"); err != nil || s.ClaudeSessionID != "u" {
		t.Fatalf("session after reopen = %+v, %v", s, err)
	}
	if ok, _ := d.IsApproved(ctx, "tg", "1", 0); !ok {
		t.Fatal("approval lost on reopen")
	}
	if p, _ := d.PendingPairings(ctx, "tg"); len(p) != 1 {
		t.Fatal("pending pairing lost on reopen")
	}
	if r, _ := d.Accept(ctx, Msg(1)); !r.Duplicate {
		t.Fatal("dedupe lost on reopen")
	}
}
