package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// testPark: a turn that hit the usage limit parks its entries (processing
// → parked, the attempt given back); parked entries are not pending,
// survive a restart and Recover as they are, and Unpark puts them back in
// their sessions' queues ahead of what queued behind them, naming each
// session once in order.
func testPark(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.open()
	in := func(chat string, i int) int64 {
		m := Msg(i)
		m.ChatID = chat
		return MustAccept(t, s, m)
	}
	a1, a2, b1 := in("A", 1), in("A", 2), in("B", 3)
	for id, key := range map[int64]string{a1: "sA", a2: "sA", b1: "sB"} {
		if err := s.Enqueue(ctx, id, key); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx, a1, b1); err != nil {
		t.Fatal(err)
	}
	if err := s.Park(ctx, a1, a2); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("parking a queued entry: %v", err)
	}
	if got, _ := s.Entry(ctx, a1); got.State != store.StateProcessing {
		t.Fatalf("a refused Park moved an entry: %s", got.State)
	}
	if err := s.Park(ctx, b1, a1); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{a1, b1} {
		got, err := s.Entry(ctx, id)
		if err != nil || got.State != store.StateParked || got.Attempts != 0 {
			t.Fatalf("parked entry %d: %+v, %v", id, got, err)
		}
	}
	if p, _ := s.ListPending(ctx, "sA", 0); len(p) != 1 || p[0].ID != a2 {
		t.Fatalf("pending in sA while parked: %+v", p)
	}
	if n, _ := s.CountPending(ctx, "sB"); n != 0 {
		t.Fatalf("%d pending in sB while parked", n)
	}
	// A restart: Recover leaves them parked.
	s.Close()
	s = e.open()
	rec, err := s.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := entryIDs(rec.Parked); fmt.Sprint(ids) != fmt.Sprint([]int64{a1, b1}) {
		t.Fatalf("recovered parked %v, want [%d %d]", ids, a1, b1)
	}
	if slices.Contains(entryIDs(rec.Resume), a1) || slices.Contains(entryIDs(rec.Resume), b1) {
		t.Fatalf("a parked entry resumed: %+v", rec.Resume)
	}
	keys, err := s.Unpark(ctx)
	if err != nil || fmt.Sprint(keys) != "[sA sB]" {
		t.Fatalf("Unpark: %v, %v; want [sA sB]", keys, err)
	}
	if p, _ := s.ListPending(ctx, "sA", 0); fmt.Sprint(entryIDs(p)) != fmt.Sprint([]int64{a1, a2}) {
		t.Fatalf("sA after Unpark: %v", entryIDs(p))
	}
	if keys, err := s.Unpark(ctx); err != nil || keys != nil {
		t.Fatalf("Unpark with nothing parked: %v, %v", keys, err)
	}
	// The attempt it gave back: it starts again as a first attempt.
	if err := s.Start(ctx, a1); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Entry(ctx, a1); got.Attempts != 1 {
		t.Fatalf("attempts after the re-run's start: %d", got.Attempts)
	}
}

func entryIDs(es []store.Entry) []int64 {
	var ids []int64
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}
