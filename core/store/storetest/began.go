package storetest

import (
	"context"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// testLaunchNotBegunIsFree: a run handed to the runner and interrupted
// before claude read its prompt (a host killed right after launching
// claude) spends none of the message's attempts (issue 85): however often
// it happens, Recover queues the message again and never gives it up.
func testLaunchNotBegunIsFree(t *testing.T, h *env) {
	ctx := context.Background()
	d := h.open()
	id := MustAccept(t, d, Msg(1))
	if err := d.Enqueue(ctx, id, "s"); err != nil {
		t.Fatal(err)
	}
	for launch := 1; launch <= store.DefaultMaxAttempts+2; launch++ {
		if err := d.Start(ctx, id); err != nil {
			t.Fatalf("launch %d: %v", launch, err)
		}
		d.Close() // killed before claude read the prompt
		d = h.open()
		rec, err := d.Recover(ctx, store.RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Failed) != 0 {
			t.Fatalf("launch %d, never begun: given up (%+v); want queued again without spending an attempt", launch, rec.Failed)
		}
		if e, _ := d.Entry(ctx, id); e.State != store.StateQueued || e.Attempts != 0 {
			t.Fatalf("launch %d, never begun: %s with %d attempts; want queued with 0", launch, e.State, e.Attempts)
		}
	}
}

// testMarkBegan: only a run marked begun spends an attempt, and
// MaxAttempts such runs give the message up; Start clears the mark; a
// mark on an entry no longer processing changes nothing.
func testMarkBegan(t *testing.T, h *env) {
	ctx := context.Background()
	d := h.open()
	id := MustAccept(t, d, Msg(1))
	if err := d.MarkBegan(ctx, id); err != nil { // accepted: nothing to mark
		t.Fatal(err)
	}
	if e, _ := d.Entry(ctx, id); e.Began || e.State != store.StateAccepted {
		t.Fatalf("MarkBegan on an accepted entry: %s, began %v", e.State, e.Began)
	}
	d.Enqueue(ctx, id, "s")
	recoverAfter := func(begun bool) store.Recovery {
		t.Helper()
		if err := d.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
		if e, _ := d.Entry(ctx, id); e.Began {
			t.Fatal("Start left the previous run's began mark")
		}
		if begun {
			if err := d.MarkBegan(ctx, id); err != nil {
				t.Fatal(err)
			}
			if e, _ := d.Entry(ctx, id); !e.Began {
				t.Fatal("MarkBegan on a processing entry: not marked")
			}
		}
		d.Close()
		d = h.open()
		rec, err := d.Recover(ctx, store.RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if rec := recoverAfter(true); len(rec.Failed) != 0 {
		t.Fatalf("first run began and was interrupted: given up %+v", rec.Failed)
	}
	if e, _ := d.Entry(ctx, id); e.State != store.StateQueued || e.Attempts != 1 || e.Began {
		t.Fatalf("after one begun run: %s, %d attempts, began %v; want queued, 1, false", e.State, e.Attempts, e.Began)
	}
	if rec := recoverAfter(false); len(rec.Failed) != 0 {
		t.Fatalf("a launch that never began after a begun run: given up %+v", rec.Failed)
	}
	if rec := recoverAfter(true); len(rec.Failed) != 1 || rec.Failed[0].ID != id || rec.Failed[0].Reason != "interrupted" {
		t.Fatalf("second begun run interrupted: Failed %+v; want the message given up", rec.Failed)
	}
	if e, _ := d.Entry(ctx, id); e.State != store.StateFailed || e.Attempts != 2 {
		t.Fatalf("given up: %s with %d attempts; want failed with 2", e.State, e.Attempts)
	}
	if err := d.MarkBegan(ctx, id); err != nil {
		t.Fatal(err)
	}
	if e, _ := d.Entry(ctx, id); e.State != store.StateFailed {
		t.Fatalf("MarkBegan after the end: %s", e.State)
	}
}

// testLaunchesAreBounded: launches that never began are free only up to
// store.MaxLaunches; from then on each counts as a run, so a message
// whose every launch dies before claude reads the prompt is given up in
// the end rather than retried without end.
func testLaunchesAreBounded(t *testing.T, h *env) {
	ctx := context.Background()
	d := h.open()
	id := MustAccept(t, d, Msg(1))
	d.Enqueue(ctx, id, "s")
	for launch := 1; ; launch++ {
		if err := d.Start(ctx, id); err != nil {
			t.Fatalf("launch %d: %v", launch, err)
		}
		rec, err := d.Recover(ctx, store.RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Failed) == 1 {
			if want := store.MaxLaunches + store.DefaultMaxAttempts - 1; launch != want {
				t.Fatalf("given up after %d launches that never began, want %d", launch, want)
			}
			if e, _ := d.Entry(ctx, id); e.Launches != launch {
				t.Fatalf("Launches = %d after %d launches", e.Launches, launch)
			}
			return
		}
		if launch > store.MaxLaunches+store.DefaultMaxAttempts {
			t.Fatalf("still retried after %d launches that never began", launch)
		}
	}
}
