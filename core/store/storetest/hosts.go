package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// HostOpener opens a store as the given host (the engine's host id, which
// it stamps as the owner of the entries it writes). Like an Opener it is
// called again after the previous store was closed; stores of different
// hosts are never open at once, so an engine whose storage one process
// holds at a time (SQLite) passes too.
type HostOpener func(t *testing.T, now func() time.Time, host string) store.Store

// RunHosts runs the cases about hosts sharing one storage as parallel
// subtests of t, like [Run].
func RunHosts(t *testing.T, newStorage func(t *testing.T) HostOpener) {
	t.Helper()
	t.Run("RecoverTakesOnlyOrphans", func(t *testing.T) {
		t.Parallel()
		testRecoverTakesOnlyOrphans(t, NewClock(), newStorage(t))
	})
}

// testRecoverTakesOnlyOrphans: entries are stamped with the host that
// wrote them; a host's Recover leaves another live host's open entries
// alone (its running turn, its queue, its reply being delivered) and takes
// them, as their owner, once that host's lease expired.
func testRecoverTakesOnlyOrphans(t *testing.T, clk *Clock, open HostOpener) {
	ctx := context.Background()
	a := open(t, clk.Now, "A")
	if _, err := a.AcquireLease(ctx, store.LeaseRequest{Name: store.HostLeasePrefix + "A", Holder: "A", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	running := MustAccept(t, a, Msg(1))
	if err := a.Begin(ctx, "s1", running); err != nil {
		t.Fatal(err)
	}
	if err := a.MarkBegan(ctx, running); err != nil {
		t.Fatal(err)
	}
	waiting := MustAccept(t, a, Msg(2))
	if err := a.Enqueue(ctx, waiting, "s1"); err != nil {
		t.Fatal(err)
	}
	replied := MustAccept(t, a, Msg(3))
	if err := a.Start(ctx, replied); err != nil {
		t.Fatal(err)
	}
	if err := a.RecordReply(ctx, store.Reply{JournalID: replied, Text: "r", Chunks: []string{"r"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{running, waiting, replied} {
		if e, err := a.Entry(ctx, id); err != nil || e.Owner != "A" {
			t.Fatalf("entry %d written by A: owner %q, %v", id, e.Owner, err)
		}
	}
	a.Close()

	// B starts while A lives: nothing of A's is B's to recover.
	b := open(t, clk.Now, "B")
	defer b.Close()
	if _, err := b.AcquireLease(ctx, store.LeaseRequest{Name: store.HostLeasePrefix + "B", Holder: "B", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	rec, err := b.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Resume) + len(rec.Deliver) + len(rec.Stale) + len(rec.Failed); n != 0 {
		t.Fatalf("B recovered %d of live host A's entries: %+v", n, rec)
	}
	if e, _ := b.Entry(ctx, running); e.State != store.StateProcessing || e.Owner != "A" {
		t.Fatalf("A's running turn after B's Recover: %s, owner %q", e.State, e.Owner)
	}
	// What B writes is B's.
	mine := MustAccept(t, b, Msg(4))
	if e, _ := b.Entry(ctx, mine); e.Owner != "B" {
		t.Fatalf("B's accept: owner %q", e.Owner)
	}

	// A's lease expires: B adopts everything A left, once. Adopt (a
	// running host's periodic call) leaves B's own entries alone.
	clk.Advance(time.Minute)
	adopted, err := b.Recover(ctx, store.RecoverOptions{Adopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(adopted.Resume) != 2 || adopted.Resume[0].ID != running || adopted.Resume[1].ID != waiting || len(adopted.Deliver) != 1 {
		t.Fatalf("Adopt: %+v, want A's two open messages and its reply", adopted)
	}
	if again, err := b.Recover(ctx, store.RecoverOptions{Adopt: true}); err != nil || len(again.Resume)+len(again.Deliver) != 0 {
		t.Fatalf("second Adopt: %+v, %v; want nothing left", again, err)
	}
	// A restart of B takes its own entries, adopted ones included.
	rec, err = b.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var resumed []int64
	for _, e := range rec.Resume {
		resumed = append(resumed, e.ID)
		if e.Owner != "B" {
			t.Errorf("resumed entry %d: owner %q, want B", e.ID, e.Owner)
		}
	}
	if len(resumed) != 3 || resumed[0] != running || resumed[1] != waiting || resumed[2] != mine {
		t.Fatalf("B resumed %v, want A's interrupted turn, A's queue and its own message %v", resumed, []int64{running, waiting, mine})
	}
	if len(rec.Deliver) != 1 || rec.Deliver[0].Entry.ID != replied {
		t.Fatalf("B delivers %+v, want A's reply %d", rec.Deliver, replied)
	}
	for _, id := range []int64{running, waiting, replied} {
		if e, _ := b.Entry(ctx, id); e.Owner != "B" {
			t.Errorf("entry %d after adoption: owner %q, want B", id, e.Owner)
		}
	}
	if e, _ := b.Entry(ctx, running); e.State != store.StateQueued || e.Attempts != 1 {
		t.Errorf("A's interrupted turn: %s attempt %d, want queued for its second attempt", e.State, e.Attempts)
	}
}
