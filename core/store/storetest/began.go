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
	id := mustAccept(t, d, msg(1))
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
