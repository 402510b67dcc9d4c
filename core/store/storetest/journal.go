package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testAcceptAndEntry: an accepted message reads back as stored.
func testAcceptAndEntry(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	in := store.Inbound{Instance: "tg", ChatID: "c1", ThreadID: "t1", MessageID: "m1", ReceivedAt: clk.Now().Add(-time.Second), Message: []byte(`{"a":1}`)}
	id := MustAccept(t, d, in)
	e, err := d.Entry(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if e.Instance != "tg" || e.ChatID != "c1" || e.ThreadID != "t1" || e.MessageID != "m1" || string(e.Message) != `{"a":1}` ||
		e.State != store.StateAccepted || e.Attempts != 0 || !e.ReceivedAt.Equal(in.ReceivedAt) || !e.UpdatedAt.Equal(clk.Now()) || e.DedupeKey == "" {
		t.Fatalf("entry = %+v", e)
	}
	if _, err := d.Entry(ctx, id+100); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing entry: err = %v, want store.ErrNotFound", err)
	}
	if _, err := d.Accept(ctx, store.Inbound{Instance: "tg"}); err == nil {
		t.Fatal("Accept without chat id succeeded")
	}
}

// testDedupe: the dedupe key, its TTL on the injected clock, its refresh and
// an explicit key.
func testDedupe(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	first := MustAccept(t, d, Msg(1))

	r, err := d.Accept(ctx, Msg(1))
	if err != nil || !r.Duplicate || r.ID != first {
		t.Fatalf("second Accept = %+v, %v; want duplicate of %d", r, err, first)
	}
	// Same message id in another thread, chat or instance is not a duplicate.
	for _, in := range []store.Inbound{
		{Instance: "tg", ChatID: "100", ThreadID: "x", MessageID: "1"},
		{Instance: "tg", ChatID: "101", MessageID: "1"},
		{Instance: "dc", ChatID: "100", MessageID: "1"},
	} {
		MustAccept(t, d, in)
	}
	// No message id and no key: never deduplicated.
	MustAccept(t, d, store.Inbound{Instance: "tg", ChatID: "100"})
	MustAccept(t, d, store.Inbound{Instance: "tg", ChatID: "100"})

	clk.Advance(store.DefaultDedupeTTL - time.Nanosecond)
	if r, _ := d.Accept(ctx, Msg(1)); !r.Duplicate {
		t.Fatal("duplicate accepted just before the TTL")
	}
	clk.Advance(time.Nanosecond)
	if r, _ := d.Accept(ctx, Msg(1)); r.Duplicate || r.ID == first {
		t.Fatalf("Accept after TTL = %+v, want a new entry", r)
	}
	// The key was refreshed by the new entry.
	if r, _ := d.Accept(ctx, Msg(1)); !r.Duplicate {
		t.Fatal("refreshed key did not dedupe")
	}
	// Explicit key overrides the derived one.
	MustAccept(t, d, store.Inbound{Instance: "tg", ChatID: "1", MessageID: "a", DedupeKey: "k"})
	if r, _ := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: "2", MessageID: "b", DedupeKey: "k"}); !r.Duplicate {
		t.Fatal("explicit dedupe key not honoured")
	}
}

// testDedupeConcurrentSameKey: of concurrent Accepts of one key exactly
// one stores.
func testDedupeConcurrentSameKey(t *testing.T, h *env) {
	d := h.open()
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := d.Accept(context.Background(), Msg(7))
			if err != nil {
				t.Error(err)
				return
			}
			if !r.Duplicate {
				mu.Lock()
				stored++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if stored != 1 {
		t.Fatalf("%d concurrent Accepts of one key stored, want 1", stored)
	}
}

// testStateMachine: the allowed transitions, the refused ones, and Start
// all or none.
func testStateMachine(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	id := MustAccept(t, d, Msg(1))
	state := func() store.Entry {
		t.Helper()
		e, err := d.Entry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if err := d.Enqueue(ctx, id, ""); err == nil {
		t.Fatal("Enqueue with empty key succeeded")
	}
	if err := d.Enqueue(ctx, id, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := d.Enqueue(ctx, id, "s2"); err != nil {
		t.Fatalf("re-enqueue: %v", err)
	}
	if e := state(); e.State != store.StateQueued || e.SessionKey != "s2" {
		t.Fatalf("after enqueue: %+v", e)
	}
	if err := d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if e := state(); e.State != store.StateProcessing || e.Attempts != 1 {
		t.Fatalf("after start: %+v", e)
	}
	for name, err := range map[string]error{
		"enqueue processing": d.Enqueue(ctx, id, "s1"),
		"start processing":   d.Start(ctx, id),
	} {
		if !errors.Is(err, store.ErrBadTransition) {
			t.Errorf("%s: err = %v, want store.ErrBadTransition", name, err)
		}
	}
	if err := d.Finish(ctx, store.FinishRequest{IDs: []int64{id}, State: store.StateFailed, Reason: "boom"}); err != nil {
		t.Fatal(err)
	}
	if e := state(); e.State != store.StateFailed || e.Reason != "boom" {
		t.Fatalf("after finish: %+v", e)
	}
	// Same terminal state again: no-op. Another terminal state: refused.
	if err := d.Finish(ctx, store.FinishRequest{IDs: []int64{id}, State: store.StateFailed}); err != nil {
		t.Fatalf("repeat finish: %v", err)
	}
	if err := d.Finish(ctx, store.FinishRequest{IDs: []int64{id}, State: store.StateDone}); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("failed → done: err = %v", err)
	}
	if err := d.Finish(ctx, store.FinishRequest{IDs: []int64{id}, State: store.StateQueued}); err == nil {
		t.Fatal("Finish to a non-terminal state succeeded")
	}
	if err := d.Start(ctx, 9999); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("start missing: %v", err)
	}
	// All or none: one bad id leaves the others untouched.
	a, b := MustAccept(t, d, Msg(2)), MustAccept(t, d, Msg(3))
	if err := d.Start(ctx, a, id, b); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("start with a terminal id: %v", err)
	}
	for _, x := range []int64{a, b} {
		if e, _ := d.Entry(ctx, x); e.State != store.StateAccepted || e.Attempts != 0 {
			t.Fatalf("entry %d changed by a failed Start: %+v", x, e)
		}
	}
	if err := d.Start(ctx, a, b); err != nil {
		t.Fatalf("start accepted entries directly: %v", err)
	}
}

// testQueuePrimitives: the per-session queue is the queued entries in id
// order; ListUnfinished pages through the open entries.
func testQueuePrimitives(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		id := MustAccept(t, d, Msg(i))
		key := "s1"
		if i == 2 {
			key = "s2"
		}
		if err := d.Enqueue(ctx, id, key); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	MustAccept(t, d, Msg(99)) // accepted, not queued
	if n, err := d.CountPending(ctx, "s1"); err != nil || n != 4 {
		t.Fatalf("CountPending = %d, %v; want 4", n, err)
	}
	got, err := d.ListPending(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{ids[0], ids[1], ids[3], ids[4]}
	if len(got) != len(want) {
		t.Fatalf("ListPending = %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("ListPending[%d] = %d, want %d", i, got[i].ID, want[i])
		}
	}
	if got, _ := d.ListPending(ctx, "s1", 2); len(got) != 2 || got[0].ID != ids[0] {
		t.Fatalf("ListPending limit 2 = %+v", got)
	}
	// Policy "old": drop the oldest two.
	if err := d.Finish(ctx, store.FinishRequest{IDs: want[:2], State: store.StateDropped, Reason: "queue full"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.CountPending(ctx, "s1"); n != 2 {
		t.Fatalf("after drop CountPending = %d, want 2", n)
	}
	if err := d.Start(ctx, ids[3]); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ListPending(ctx, "s1", 0); len(got) != 1 || got[0].ID != ids[4] {
		t.Fatalf("processing entry still pending: %+v", got)
	}
	if got, _ := d.ListPending(ctx, "nope", 0); got != nil {
		t.Fatalf("unknown session pending = %+v, want nil", got)
	}
	un, err := d.ListUnfinished(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(un) != 4 { // ids[2], ids[3] (processing), ids[4], msg 99
		t.Fatalf("ListUnfinished = %d entries, want 4", len(un))
	}
	for i := 1; i < len(un); i++ {
		if un[i-1].ID >= un[i].ID {
			t.Fatal("ListUnfinished not oldest first")
		}
	}
	if page, _ := d.ListUnfinished(ctx, un[1].ID, 1); len(page) != 1 || page[0].ID != un[2].ID {
		t.Fatalf("ListUnfinished paging = %+v", page)
	}
}

// testBegin: Begin routes and starts in one write; Recover sends its
// interrupted entries back to their session's queue, in order with the
// entries queued behind them.
func testBegin(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	first := MustAccept(t, d, Msg(1))
	if err := d.Begin(ctx, "s1", first); err != nil {
		t.Fatal(err)
	}
	e, err := d.Entry(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if e.State != store.StateProcessing || e.SessionKey != "s1" || e.Attempts != 1 {
		t.Fatalf("after Begin: state %s, session %q, attempts %d; want processing, s1, 1", e.State, e.SessionKey, e.Attempts)
	}
	second := MustAccept(t, d, Msg(2))
	if err := d.Enqueue(ctx, second, "s1"); err != nil {
		t.Fatal(err)
	}
	// All or none: a done entry refuses, the accepted one stays accepted.
	third := MustAccept(t, d, Msg(3))
	done := MustAccept(t, d, Msg(4))
	if err := d.Finish(ctx, store.FinishRequest{IDs: []int64{done}, State: store.StateDone}); err != nil {
		t.Fatal(err)
	}
	if err := d.Begin(ctx, "s2", third, done); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("Begin of a done entry: %v, want ErrBadTransition", err)
	}
	if e, _ := d.Entry(ctx, third); e.State != store.StateAccepted || e.SessionKey != "" {
		t.Fatalf("a refused Begin changed an entry: %s %q", e.State, e.SessionKey)
	}
	if err := d.Begin(ctx, "", third); err == nil {
		t.Fatal("Begin with an empty session key succeeded")
	}
	if err := d.Begin(ctx, "s2"); err != nil {
		t.Fatalf("Begin of no ids: %v", err)
	}
	// Interrupted: back in s1's queue, ahead of the entry queued after it.
	rec, err := d.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ListPending(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != first || got[1].ID != second {
		t.Fatalf("s1 after Recover: %v, want [%d %d]", ids(got), first, second)
	}
	if len(rec.Resume) != 3 { // first, second (queued), third (accepted)
		t.Fatalf("Resume: %v", ids(rec.Resume))
	}
}

// testCancelledContext: a write whose context ended before it started
// changes nothing.
func testCancelledContext(t *testing.T, h *env) {
	d := h.open()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Accept(ctx, Msg(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Accept with cancelled ctx: %v", err)
	}
	// Nothing was stored.
	MustAccept(t, d, Msg(1))
}

// testFailureIsolation: a failing write does not fail or undo concurrent
// ones, however the engine batches them.
func testFailureIsolation(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	ids := make([]int64, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%10 == 0 {
				errs[i] = d.Start(ctx, 1_000_000+int64(i)) // not found
				return
			}
			ids[i], errs[i] = func() (int64, error) { r, err := d.Accept(ctx, Msg(i)); return r.ID, err }()
		}()
	}
	wg.Wait()
	for i := range n {
		if i%10 == 0 {
			if !errors.Is(errs[i], store.ErrNotFound) {
				t.Errorf("op %d: %v, want store.ErrNotFound", i, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Fatalf("accept %d: %v", i, errs[i])
		}
		if _, err := d.Entry(ctx, ids[i]); err != nil {
			t.Fatalf("accept %d lost: %v", i, err)
		}
	}
}

// testAmend: an accepted entry's message is replaced (durably: a restart
// reads the new one, as Resume); a routed, started or finished entry's is
// not, and a missing entry is ErrNotFound.
func testAmend(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	id := MustAccept(t, d, store.Inbound{Instance: "tg", ChatID: "c1", MessageID: "m1", Message: []byte(`{"body":"voice"}`)})
	if err := d.Amend(ctx, id, []byte(`{"body":"transcript"}`)); err != nil {
		t.Fatal(err)
	}
	e, err := d.Entry(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Message) != `{"body":"transcript"}` || e.State != store.StateAccepted {
		t.Fatalf("after Amend: %s in %s", e.Message, e.State)
	}
	d.Close()
	d = h.open()
	rec, err := d.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Resume) != 1 || string(rec.Resume[0].Message) != `{"body":"transcript"}` {
		t.Fatalf("after a restart Resume = %+v", rec.Resume)
	}
	if err := d.Enqueue(ctx, id, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := d.Amend(ctx, id, []byte(`{"body":"late"}`)); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("Amend of a queued entry: err = %v, want store.ErrBadTransition", err)
	}
	if e, _ := d.Entry(ctx, id); string(e.Message) != `{"body":"transcript"}` {
		t.Fatalf("a refused Amend changed the message: %s", e.Message)
	}
	if err := d.Amend(ctx, id+100, []byte(`{}`)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Amend of a missing entry: err = %v, want store.ErrNotFound", err)
	}
}
