package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injected clock tests advance by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openTest(t testing.TB, dir string, clk *fakeClock) *DB {
	t.Helper()
	// NORMAL keeps the many small sequential writes of the tests fast; the
	// crash test runs the default (FULL).
	opts := Options{Synchronous: "NORMAL"}
	if clk != nil {
		opts.Now = clk.Now
	}
	d, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func msg(i int) Inbound {
	return Inbound{Instance: "tg", ChatID: "100", MessageID: fmt.Sprint(i), Message: []byte(fmt.Sprintf(`{"text":"m%d"}`, i))}
}

func mustAccept(t testing.TB, d *DB, in Inbound) int64 {
	t.Helper()
	r, err := d.Accept(context.Background(), in)
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if r.Duplicate {
		t.Fatalf("Accept %v: unexpected duplicate", in.MessageID)
	}
	return r.ID
}

func TestAcceptAndEntry(t *testing.T) {
	t.Parallel()
	clk := newClock()
	d := openTest(t, t.TempDir(), clk)
	ctx := context.Background()
	in := Inbound{Instance: "tg", ChatID: "c1", ThreadID: "t1", MessageID: "m1", ReceivedAt: clk.Now().Add(-time.Second), Message: []byte(`{"a":1}`)}
	id := mustAccept(t, d, in)
	e, err := d.Entry(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if e.Instance != "tg" || e.ChatID != "c1" || e.ThreadID != "t1" || e.MessageID != "m1" || string(e.Message) != `{"a":1}` ||
		e.State != StateAccepted || e.Attempts != 0 || !e.ReceivedAt.Equal(in.ReceivedAt) || !e.UpdatedAt.Equal(clk.Now()) || e.DedupeKey == "" {
		t.Fatalf("entry = %+v", e)
	}
	if _, err := d.Entry(ctx, id+100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing entry: err = %v, want ErrNotFound", err)
	}
	if _, err := d.Accept(ctx, Inbound{Instance: "tg"}); err == nil {
		t.Fatal("Accept without chat id succeeded")
	}
}

func TestDedupe(t *testing.T) {
	t.Parallel()
	clk := newClock()
	d := openTest(t, t.TempDir(), clk)
	ctx := context.Background()
	first := mustAccept(t, d, msg(1))

	r, err := d.Accept(ctx, msg(1))
	if err != nil || !r.Duplicate || r.ID != first {
		t.Fatalf("second Accept = %+v, %v; want duplicate of %d", r, err, first)
	}
	// Same message id in another thread, chat or instance is not a duplicate.
	for _, in := range []Inbound{
		{Instance: "tg", ChatID: "100", ThreadID: "x", MessageID: "1"},
		{Instance: "tg", ChatID: "101", MessageID: "1"},
		{Instance: "dc", ChatID: "100", MessageID: "1"},
	} {
		mustAccept(t, d, in)
	}
	// No message id and no key: never deduplicated.
	mustAccept(t, d, Inbound{Instance: "tg", ChatID: "100"})
	mustAccept(t, d, Inbound{Instance: "tg", ChatID: "100"})

	clk.Advance(DefaultDedupeTTL - time.Nanosecond)
	if r, _ := d.Accept(ctx, msg(1)); !r.Duplicate {
		t.Fatal("duplicate accepted just before the TTL")
	}
	clk.Advance(time.Nanosecond)
	if r, _ := d.Accept(ctx, msg(1)); r.Duplicate || r.ID == first {
		t.Fatalf("Accept after TTL = %+v, want a new entry", r)
	}
	// The key was refreshed by the new entry.
	if r, _ := d.Accept(ctx, msg(1)); !r.Duplicate {
		t.Fatal("refreshed key did not dedupe")
	}
	// Explicit key overrides the derived one.
	mustAccept(t, d, Inbound{Instance: "tg", ChatID: "1", MessageID: "a", DedupeKey: "k"})
	if r, _ := d.Accept(ctx, Inbound{Instance: "tg", ChatID: "2", MessageID: "b", DedupeKey: "k"}); !r.Duplicate {
		t.Fatal("explicit dedupe key not honoured")
	}
}

func TestDedupeConcurrentSameKey(t *testing.T) {
	t.Parallel()
	d := openTest(t, t.TempDir(), nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := d.Accept(context.Background(), msg(7))
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

func TestDedupeCap(t *testing.T) {
	t.Parallel()
	clk := newClock()
	dir := t.TempDir()
	d, err := Open(context.Background(), dir, Options{Now: clk.Now, DedupeMax: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		mustAccept(t, d, msg(i))
		clk.Advance(time.Millisecond)
	}
	count := func(d *DB) int {
		var n int
		if err := d.rdb.QueryRow(`SELECT count(*) FROM dedupe`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(d); n != 50 {
		t.Fatalf("dedupe rows = %d, want 50", n)
	}
	// The 10 oldest were pruned: they are accepted again; the newest are not.
	if r, _ := d.Accept(context.Background(), msg(0)); r.Duplicate {
		t.Fatal("oldest key survived the cap")
	}
	if r, _ := d.Accept(context.Background(), msg(59)); !r.Duplicate {
		t.Fatal("newest key was pruned")
	}
	d.Close()
	// The cap and the keys survive a restart.
	d2, err := Open(context.Background(), dir, Options{Now: clk.Now, DedupeMax: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if r, _ := d2.Accept(context.Background(), msg(58)); !r.Duplicate {
		t.Fatal("dedupe key lost across restart")
	}
	mustAccept(t, d2, msg(1000))
	if n := count(d2); n != 50 {
		t.Fatalf("after reopen dedupe rows = %d, want 50", n)
	}
}

func TestDefaultDedupeCap(t *testing.T) {
	t.Parallel()
	clk := newClock()
	d := openTest(t, t.TempDir(), clk)
	for i := range DefaultDedupeMax + 10 {
		mustAccept(t, d, msg(i))
	}
	var n int
	if err := d.rdb.QueryRow(`SELECT count(*) FROM dedupe`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != DefaultDedupeMax {
		t.Fatalf("dedupe rows = %d, want %d", n, DefaultDedupeMax)
	}
}

func TestStateMachine(t *testing.T) {
	t.Parallel()
	d := openTest(t, t.TempDir(), newClock())
	ctx := context.Background()
	id := mustAccept(t, d, msg(1))
	state := func() Entry {
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
	if e := state(); e.State != StateQueued || e.SessionKey != "s2" {
		t.Fatalf("after enqueue: %+v", e)
	}
	if err := d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if e := state(); e.State != StateProcessing || e.Attempts != 1 {
		t.Fatalf("after start: %+v", e)
	}
	for name, err := range map[string]error{
		"enqueue processing": d.Enqueue(ctx, id, "s1"),
		"start processing":   d.Start(ctx, id),
	} {
		if !errors.Is(err, ErrBadTransition) {
			t.Errorf("%s: err = %v, want ErrBadTransition", name, err)
		}
	}
	if err := d.Finish(ctx, FinishRequest{IDs: []int64{id}, State: StateFailed, Reason: "boom"}); err != nil {
		t.Fatal(err)
	}
	if e := state(); e.State != StateFailed || e.Reason != "boom" {
		t.Fatalf("after finish: %+v", e)
	}
	// Same terminal state again: no-op. Another terminal state: refused.
	if err := d.Finish(ctx, FinishRequest{IDs: []int64{id}, State: StateFailed}); err != nil {
		t.Fatalf("repeat finish: %v", err)
	}
	if err := d.Finish(ctx, FinishRequest{IDs: []int64{id}, State: StateDone}); !errors.Is(err, ErrBadTransition) {
		t.Fatalf("failed → done: err = %v", err)
	}
	if err := d.Finish(ctx, FinishRequest{IDs: []int64{id}, State: StateQueued}); err == nil {
		t.Fatal("Finish to a non-terminal state succeeded")
	}
	if err := d.Start(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("start missing: %v", err)
	}
	// All or none: one bad id leaves the others untouched.
	a, b := mustAccept(t, d, msg(2)), mustAccept(t, d, msg(3))
	if err := d.Start(ctx, a, id, b); !errors.Is(err, ErrBadTransition) {
		t.Fatalf("start with a terminal id: %v", err)
	}
	for _, x := range []int64{a, b} {
		if e, _ := d.Entry(ctx, x); e.State != StateAccepted || e.Attempts != 0 {
			t.Fatalf("entry %d changed by a failed Start: %+v", x, e)
		}
	}
	if err := d.Start(ctx, a, b); err != nil {
		t.Fatalf("start accepted entries directly: %v", err)
	}
}

func TestQueuePrimitives(t *testing.T) {
	t.Parallel()
	d := openTest(t, t.TempDir(), newClock())
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		id := mustAccept(t, d, msg(i))
		key := "s1"
		if i == 2 {
			key = "s2"
		}
		if err := d.Enqueue(ctx, id, key); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	mustAccept(t, d, msg(99)) // accepted, not queued
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
	if err := d.Finish(ctx, FinishRequest{IDs: want[:2], State: StateDropped, Reason: "queue full"}); err != nil {
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

func TestOutbox(t *testing.T) {
	t.Parallel()
	clk := newClock()
	d := openTest(t, t.TempDir(), clk)
	ctx := context.Background()
	id := mustAccept(t, d, Inbound{Instance: "tg", ChatID: "c", ThreadID: "th", MessageID: "1"})
	cover := mustAccept(t, d, msg(2))
	if err := d.Start(ctx, id, cover); err != nil {
		t.Fatal(err)
	}
	if _, err := d.PendingReply(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PendingReply before record: %v", err)
	}
	if err := d.RecordReply(ctx, Reply{JournalID: id, Covers: []int64{cover}, Text: "ab", Chunks: []string{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordReply(ctx, Reply{JournalID: id, Text: "again"}); !errors.Is(err, ErrBadTransition) {
		t.Fatalf("second RecordReply: %v", err)
	}
	if e, _ := d.Entry(ctx, cover); e.State != StateDone {
		t.Fatalf("covered entry = %s, want done", e.State)
	}
	p, err := d.PendingReply(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Entry.State != StateReplied || p.Reply.Instance != "tg" || p.Reply.ChatID != "c" || p.Reply.ThreadID != "th" ||
		!p.Reply.ProducedAt.Equal(clk.Now()) || len(p.Chunks) != 3 || len(p.Unsent()) != 3 || p.Reply.Text != "ab" {
		t.Fatalf("pending reply = %+v", p)
	}
	clk.Advance(time.Second)
	r, err := d.MarkSent(ctx, ChunkSent{JournalID: id, Index: 1, PlatformIDs: []string{"p1"}})
	if err != nil || r.AllSent {
		t.Fatalf("MarkSent 1 = %+v, %v", r, err)
	}
	// The first record wins.
	if _, err := d.MarkSent(ctx, ChunkSent{JournalID: id, Index: 1, PlatformIDs: []string{"other"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.MarkSent(ctx, ChunkSent{JournalID: id, Index: 7}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MarkSent missing chunk: %v", err)
	}
	p, _ = d.PendingReply(ctx, id)
	if c := p.Chunks[1]; !c.Sent() || len(c.PlatformIDs) != 1 || c.PlatformIDs[0] != "p1" || !c.SentAt.Equal(clk.Now()) {
		t.Fatalf("chunk 1 = %+v", c)
	}
	if u := p.Unsent(); len(u) != 2 || u[0].Index != 0 || u[1].Index != 2 {
		t.Fatalf("unsent = %+v", u)
	}
	d.MarkSent(ctx, ChunkSent{JournalID: id, Index: 0, PlatformIDs: []string{"p0"}})
	r, err = d.MarkSent(ctx, ChunkSent{JournalID: id, Index: 2, PlatformIDs: []string{"p2a", "p2b"}})
	if err != nil || !r.AllSent {
		t.Fatalf("last MarkSent = %+v, %v", r, err)
	}
	if e, _ := d.Entry(ctx, id); e.State != StateDone {
		t.Fatalf("entry after all sent = %s", e.State)
	}

	// An empty reply (NO_REPLY) finishes the entry at once; an explicit
	// target is kept.
	id2 := mustAccept(t, d, msg(3))
	d.Start(ctx, id2)
	if err := d.RecordReply(ctx, Reply{JournalID: id2, Instance: "dc", ChatID: "z"}); err != nil {
		t.Fatal(err)
	}
	p, _ = d.PendingReply(ctx, id2)
	if p.Entry.State != StateDone || p.Reply.Instance != "dc" || len(p.Chunks) != 0 {
		t.Fatalf("empty reply = %+v", p)
	}
	if err := d.RecordReply(ctx, Reply{JournalID: 4242}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("reply to missing entry: %v", err)
	}
}

func TestRecover(t *testing.T) {
	t.Parallel()
	clk := newClock()
	dir := t.TempDir()
	d := openTest(t, dir, clk)
	ctx := context.Background()

	accepted := mustAccept(t, d, msg(1))
	queued := mustAccept(t, d, msg(2))
	d.Enqueue(ctx, queued, "s")
	once := mustAccept(t, d, msg(3)) // processing, attempt 1 → re-queued
	d.Enqueue(ctx, once, "s")
	d.Start(ctx, once)
	noKey := mustAccept(t, d, msg(4)) // processing without session → accepted
	d.Start(ctx, noKey)
	twice := mustAccept(t, d, msg(5)) // processing, attempt 2 → failed
	d.Enqueue(ctx, twice, "s")
	d.Start(ctx, twice)
	stale := mustAccept(t, d, msg(6))
	d.Start(ctx, stale)
	d.RecordReply(ctx, Reply{JournalID: stale, Text: "old", Chunks: []string{"old"}})
	clk.Advance(10 * time.Minute)
	fresh := mustAccept(t, d, msg(7))
	d.Start(ctx, fresh)
	d.RecordReply(ctx, Reply{JournalID: fresh, Text: "xy", Chunks: []string{"x", "y"}})
	d.MarkSent(ctx, ChunkSent{JournalID: fresh, Index: 0, PlatformIDs: []string{"1"}})
	done := mustAccept(t, d, msg(8))
	d.Finish(ctx, FinishRequest{IDs: []int64{done}, State: StateDone})
	// "twice" was already re-run once before this crash.
	if _, err := d.wdbExec(`UPDATE journal SET attempts = 2 WHERE id = ?`, twice); err != nil {
		t.Fatal(err)
	}
	d.Close()
	clk.Advance(6 * time.Minute) // stale is 16 min old, fresh 6 min

	d = openTest(t, dir, clk)
	rec, err := d.Recover(ctx, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(es []Entry) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	if got, want := fmt.Sprint(ids(rec.Resume)), fmt.Sprint([]int64{accepted, queued, once, noKey}); got != want {
		t.Fatalf("Resume = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(ids(rec.Failed)), fmt.Sprint([]int64{twice}); got != want {
		t.Fatalf("Failed = %s, want %s", got, want)
	}
	if len(rec.Deliver) != 1 || rec.Deliver[0].Entry.ID != fresh || len(rec.Deliver[0].Unsent()) != 1 || rec.Deliver[0].Unsent()[0].Text != "y" {
		t.Fatalf("Deliver = %+v", rec.Deliver)
	}
	if len(rec.Stale) != 1 || rec.Stale[0].Entry.ID != stale || rec.Stale[0].Entry.State != StateFailed {
		t.Fatalf("Stale = %+v", rec.Stale)
	}
	wantStates := map[int64]State{accepted: StateAccepted, queued: StateQueued, once: StateQueued, noKey: StateAccepted,
		twice: StateFailed, stale: StateFailed, fresh: StateReplied, done: StateDone}
	for id, want := range wantStates {
		if e, _ := d.Entry(ctx, id); e.State != want {
			t.Errorf("entry %d = %s, want %s", id, e.State, want)
		}
	}
	if e, _ := d.Entry(ctx, once); e.Attempts != 1 {
		t.Errorf("re-queued attempts = %d, want 1", e.Attempts)
	}
	// Idempotent: a second Recover finds the same work, nothing newly failed.
	rec2, err := d.Recover(ctx, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec2.Resume) != 4 || len(rec2.Deliver) != 1 || len(rec2.Stale) != 0 || len(rec2.Failed) != 0 {
		t.Fatalf("second Recover = %+v", rec2)
	}
	// The re-run: attempt 2, interrupted again → failed.
	d.Start(ctx, once)
	rec3, _ := d.Recover(ctx, RecoverOptions{})
	if len(rec3.Failed) != 1 || rec3.Failed[0].ID != once {
		t.Fatalf("interrupted twice: Failed = %+v", rec3.Failed)
	}
	// MaxAttempts 1: no retry at all.
	x := mustAccept(t, d, msg(9))
	d.Start(ctx, x)
	rec4, _ := d.Recover(ctx, RecoverOptions{MaxAttempts: 1})
	if len(rec4.Failed) != 1 || rec4.Failed[0].ID != x {
		t.Fatalf("MaxAttempts 1: Failed = %+v", rec4.Failed)
	}
	// A custom stale bound.
	rec5, _ := d.Recover(ctx, RecoverOptions{StaleAfter: time.Minute})
	if len(rec5.Stale) != 1 || rec5.Stale[0].Entry.ID != fresh {
		t.Fatalf("StaleAfter 1m: Stale = %+v", rec5.Stale)
	}
}

// wdbExec runs a statement through the writer (test surgery only).
func (d *DB) wdbExec(q string, args ...any) (int64, error) {
	var n int64
	err := d.w.do(context.Background(), func(t *wtx) (err error) {
		n, err = t.execN(q, args...)
		return err
	})
	return n, err
}

func TestPrune(t *testing.T) {
	t.Parallel()
	clk := newClock()
	d := openTest(t, t.TempDir(), clk)
	ctx := context.Background()
	old := mustAccept(t, d, msg(1))
	d.Start(ctx, old)
	d.RecordReply(ctx, Reply{JournalID: old, Text: "a", Chunks: []string{"a"}})
	d.MarkSent(ctx, ChunkSent{JournalID: old, Index: 0})
	open := mustAccept(t, d, msg(2))
	clk.Advance(time.Hour)
	recent := mustAccept(t, d, msg(3))
	d.Finish(ctx, FinishRequest{IDs: []int64{recent}, State: StateDropped})
	n, err := d.Prune(ctx, clk.Now().Add(-time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if _, err := d.Entry(ctx, old); !errors.Is(err, ErrNotFound) {
		t.Fatal("old entry not pruned")
	}
	if _, err := d.PendingReply(ctx, old); !errors.Is(err, ErrNotFound) {
		t.Fatal("old reply not pruned")
	}
	var chunks int
	d.rdb.QueryRow(`SELECT count(*) FROM reply_chunks`).Scan(&chunks)
	if chunks != 0 {
		t.Fatalf("%d chunks left", chunks)
	}
	for _, id := range []int64{open, recent} {
		if _, err := d.Entry(ctx, id); err != nil {
			t.Fatalf("entry %d pruned: %v", id, err)
		}
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	clk := newClock()
	dir := t.TempDir()
	d := openTest(t, dir, clk)
	ctx := context.Background()
	if _, err := d.Session(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
	s := Session{
		Key: "agent:main:tg:dm:1", SessionID: "sid", ClaudeSessionID: "0b6c3f1e-0000-4000-8000-000000000001",
		LastMessageAt: clk.Now().Add(-time.Minute), Turns: 3,
		Usage:   Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheCreationTokens: 4},
		CostUSD: 0.25, Model: "claude-sonnet", Chat: []byte(`{"chat_type":"dm"}`),
		LastTarget: Target{Instance: "tg", ChatID: "1", ThreadID: "2"}, Verbose: true, AbortHint: true, MemoryFlushCycle: 7,
	}
	putSession(t, d, s)
	got, err := d.Session(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	want := s
	want.CreatedAt, want.UpdatedAt = clk.Now(), clk.Now()
	if fmt.Sprintf("%+v", normTimes(got)) != fmt.Sprintf("%+v", normTimes(want)) {
		t.Fatalf("Session =\n%+v\nwant\n%+v", got, want)
	}
	// Update again later: CreatedAt kept, UpdatedAt now, fields replaced.
	created := clk.Now()
	clk.Advance(time.Hour)
	if _, err := d.UpdateSession(ctx, s.Key, func(x *Session, _ bool) error { x.Turns, x.Verbose = 4, false; return nil }); err != nil {
		t.Fatal(err)
	}
	got, _ = d.Session(ctx, s.Key)
	if !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(clk.Now()) || got.Turns != 4 || got.Verbose {
		t.Fatalf("after second update: %+v", got)
	}
	// UpdateSession: read-modify-write, also creating.
	got, err = d.UpdateSession(ctx, s.Key, func(x *Session, found bool) error {
		if !found {
			return errors.New("not found")
		}
		x.Turns++
		x.Usage.InputTokens += 10
		return nil
	})
	if err != nil || got.Turns != 5 || got.Usage.InputTokens != 11 {
		t.Fatalf("UpdateSession = %+v, %v", got, err)
	}
	if _, err := d.UpdateSession(ctx, "new", func(x *Session, found bool) error {
		if found {
			return errors.New("found")
		}
		x.SessionID = "n"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := d.UpdateSession(ctx, "new", func(x *Session, _ bool) error { x.SessionID = "changed"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateSession fn error: %v", err)
	}
	if x, _ := d.Session(ctx, "new"); x.SessionID != "n" {
		t.Fatalf("failed update was applied: %+v", x)
	}
	for i := range 25 {
		putSession(t, d, Session{Key: fmt.Sprintf("p%02d", i)})
	}
	if n, _ := d.CountSessions(ctx); n != 27 {
		t.Fatalf("CountSessions = %d, want 27", n)
	}
	if _, err := d.UpdateSession(ctx, "", func(*Session, bool) error { return nil }); err == nil {
		t.Fatal("UpdateSession without key succeeded")
	}
}

// putSession stores s as it is (CreatedAt and UpdatedAt become now).
func putSession(t testing.TB, d *DB, s Session) {
	t.Helper()
	if _, err := d.UpdateSession(context.Background(), s.Key, func(x *Session, _ bool) error { *x = s; return nil }); err != nil {
		t.Fatalf("UpdateSession %s: %v", s.Key, err)
	}
}

func normTimes(s Session) Session {
	s.CreatedAt, s.UpdatedAt, s.LastMessageAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC(), s.LastMessageAt.UTC()
	return s
}

func TestPairing(t *testing.T) {
	t.Parallel()
	clk := newClock()
	d := openTest(t, t.TempDir(), clk)
	ctx := context.Background()
	r, err := d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "42", TTL: time.Hour})
	if err != nil || !r.Created || len(r.Code.Code) != 8 || !r.Code.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("RequestPairing = %+v, %v", r, err)
	}
	again, _ := d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "42"})
	if again.Created || again.Code.Code != r.Code.Code {
		t.Fatalf("second request = %+v, want the same code", again)
	}
	d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "43"})
	d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "44", Code: "fixed01"})
	if _, err := d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "45"}); !errors.Is(err, ErrTooManyPending) {
		t.Fatalf("fourth pending: %v", err)
	}
	if _, err := d.RequestPairing(ctx, PairingRequest{Instance: "dc", SenderID: "45"}); err != nil {
		t.Fatalf("other instance: %v", err)
	}
	if p, _ := d.PendingPairings(ctx, "tg"); len(p) != 3 {
		t.Fatalf("pending tg = %d, want 3", len(p))
	}
	if p, _ := d.PendingPairings(ctx, ""); len(p) != 4 {
		t.Fatalf("pending all = %d, want 4", len(p))
	}
	if ok, _ := d.IsApproved(ctx, "tg", "42"); ok {
		t.Fatal("approved before approval")
	}
	a, err := d.ApprovePairing(ctx, " "+lower(r.Code.Code)+" ")
	if err != nil || a.Entry() != "tg:42" || !a.ApprovedAt.Equal(clk.Now()) {
		t.Fatalf("ApprovePairing = %+v, %v", a, err)
	}
	if ok, _ := d.IsApproved(ctx, "tg", "42"); !ok {
		t.Fatal("not approved after approval")
	}
	if _, err := d.ApprovePairing(ctx, r.Code.Code); !errors.Is(err, ErrNotFound) {
		t.Fatalf("code reused: %v", err)
	}
	if a, err := d.ApprovePairing(ctx, "FIXED01"); err != nil || a.Entry() != "tg:44" {
		t.Fatalf("approve given code = %+v, %v", a, err)
	}
	// Expiry.
	clk.Advance(time.Hour)
	p43, _ := d.PendingPairings(ctx, "tg")
	if len(p43) != 0 {
		t.Fatalf("expired codes listed: %+v", p43)
	}
	var code43 string
	d.rdb.QueryRow(`SELECT code FROM pairing_codes WHERE sender_id = '43'`).Scan(&code43)
	if _, err := d.ApprovePairing(ctx, code43); !errors.Is(err, ErrExpired) {
		t.Fatalf("approve expired: %v", err)
	}
	if _, err := d.ApprovePairing(ctx, code43); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired code not deleted: %v", err)
	}
	if r2, _ := d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "45"}); !r2.Created {
		t.Fatal("expired codes still count toward the cap")
	}
	for _, sender := range []string{"42", "44"} {
		if ok, _ := d.IsApproved(ctx, "tg", sender); !ok {
			t.Fatalf("tg:%s not approved", sender)
		}
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func TestReopenKeepsState(t *testing.T) {
	t.Parallel()
	clk := newClock()
	dir := t.TempDir()
	ctx := context.Background()
	d, err := Open(ctx, dir, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	id := mustAccept(t, d, msg(1))
	d.Enqueue(ctx, id, "s")
	putSession(t, d, Session{Key: "s", ClaudeSessionID: "u"})
	r, _ := d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "1"})
	d.RequestPairing(ctx, PairingRequest{Instance: "tg", SenderID: "2"})
	d.ApprovePairing(ctx, r.Code.Code)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := d.Accept(ctx, msg(2)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}

	d = openTest(t, dir, clk)
	if e, err := d.Entry(ctx, id); err != nil || e.State != StateQueued || e.SessionKey != "s" {
		t.Fatalf("entry after reopen = %+v, %v", e, err)
	}
	if p, _ := d.ListPending(ctx, "s", 0); len(p) != 1 {
		t.Fatal("queue lost on reopen")
	}
	if s, err := d.Session(ctx, "s"); err != nil || s.ClaudeSessionID != "u" {
		t.Fatalf("session after reopen = %+v, %v", s, err)
	}
	if ok, _ := d.IsApproved(ctx, "tg", "1"); !ok {
		t.Fatal("approval lost on reopen")
	}
	if p, _ := d.PendingPairings(ctx, "tg"); len(p) != 1 {
		t.Fatal("pending pairing lost on reopen")
	}
	if r, _ := d.Accept(ctx, msg(1)); !r.Duplicate {
		t.Fatal("dedupe lost on reopen")
	}
}

func TestOpenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openTest(t, dir, nil)
	if d, err := Open(context.Background(), dir, Options{}); err == nil {
		d.Close()
		t.Fatal("second Open of one data dir succeeded")
	}
}

func TestSchemaTooNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openTest(t, dir, nil)
	if _, err := d.wdbExec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if d, err := Open(context.Background(), dir, Options{}); err == nil {
		d.Close()
		t.Fatal("opened a database with a newer schema")
	}
}

func TestFileModes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ctx := context.Background()
	check := func(dir string) {
		t.Helper()
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != DirMode {
			t.Errorf("dir mode = %v, want %v", st.Mode().Perm(), DirMode)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			seen[e.Name()] = true
			if info.Mode().Perm() != FileMode {
				t.Errorf("%s mode = %v, want %v", e.Name(), info.Mode().Perm(), FileMode)
			}
		}
		for _, f := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", LockFile} {
			if !seen[f] {
				t.Errorf("%s missing (have %v)", f, seen)
			}
		}
	}

	// A fresh, nested directory.
	fresh := filepath.Join(base, "a", "data")
	d := openTest(t, fresh, nil)
	mustAccept(t, d, msg(1))
	check(fresh)
	d.Close()

	// Loosen everything, reopen: tightened.
	os.Chmod(fresh, 0o755)
	for _, f := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", LockFile} {
		os.Chmod(filepath.Join(fresh, f), 0o644)
	}
	d, err := Open(ctx, fresh, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAccept(t, d, msg(2))
	check(fresh)
	d.Close()

	// A file in place of the directory.
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if d, err := Open(ctx, file, Options{}); err == nil {
		d.Close()
		t.Fatal("Open on a regular file succeeded")
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	d := openTest(t, t.TempDir(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Accept(ctx, msg(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Accept with cancelled ctx: %v", err)
	}
	// Nothing was stored.
	mustAccept(t, d, msg(1))
}

// TestBatchIsolation: a failing operation in a batch does not fail or undo
// the others.
func TestBatchIsolation(t *testing.T) {
	t.Parallel()
	d := openTest(t, t.TempDir(), nil)
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
			ids[i], errs[i] = func() (int64, error) { r, err := d.Accept(ctx, msg(i)); return r.ID, err }()
		}()
	}
	wg.Wait()
	for i := range n {
		if i%10 == 0 {
			if !errors.Is(errs[i], ErrNotFound) {
				t.Errorf("op %d: %v, want ErrNotFound", i, errs[i])
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

func TestRecentSessionsAndPendingCounts(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := now
	db, err := Open(context.Background(), t.TempDir(), Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for i, k := range []string{"a", "b", "c"} {
		clock = now.Add(time.Duration(i) * time.Minute)
		putSession(t, db, Session{Key: k})
	}
	got, err := db.RecentSessions(ctx, 2)
	if err != nil || len(got) != 2 || got[0].Key != "c" || got[1].Key != "b" {
		t.Fatalf("recent: %v %+v", err, got)
	}
	for i, key := range []string{"a", "a", "c"} {
		res, err := db.Accept(ctx, Inbound{Instance: "lo", ChatID: "x", MessageID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Enqueue(ctx, res.ID, key); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := db.PendingCounts(ctx)
	if err != nil || counts["a"] != 2 || counts["c"] != 1 || len(counts) != 2 {
		t.Fatalf("counts: %v %v", err, counts)
	}
}
