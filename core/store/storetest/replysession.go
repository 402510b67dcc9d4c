package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// testReplySession: a reply's Session update is made in the reply's
// transaction, as UpdateSession would make it (a stored row changed, a
// missing one created), before its ClaudeCost; an error of its function,
// or a reply the journal refuses, writes neither the reply nor the
// session; a ClaudeCost of another claude session than the updated row's
// is left out; the update survives a restart with the reply.
func testReplySession(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.open()
	if _, err := s.UpdateSession(ctx, "k", func(x *store.Session, _ bool) error {
		x.ClaudeSessionID, x.Turns = "c1", 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	started := func(i int) int64 {
		t.Helper()
		return mustStart(t, s, Msg(i), "k")
	}
	var sawFound []bool
	turn := func(x *store.Session, found bool) error {
		sawFound = append(sawFound, found)
		x.Turns++
		x.Model = "m"
		x.ClaudeSessionID = "c1"
		return nil
	}
	a := started(1)
	if err := s.RecordReply(ctx, store.Reply{JournalID: a, Text: "r", Chunks: []string{"r"}, AttemptFirst: true,
		Session: &store.SessionUpdate{Key: "k", Fn: turn}, ClaudeCost: &store.ClaudeCost{Key: "k", Of: "c1", USD: 0.5}}); err != nil {
		t.Fatal(err)
	}
	if x, err := s.Session(ctx, "k"); err != nil || x.Turns != 2 || x.Model != "m" || x.ClaudeCostUSD != 0.5 || x.ClaudeCostOf != "c1" {
		t.Fatalf("session after the reply: %+v, %v; want 2 turns, model m, claude's total 0.5 of c1", x, err)
	}
	if len(sawFound) == 0 || !sawFound[len(sawFound)-1] {
		t.Fatalf("the update saw found %v for a stored session", sawFound)
	}
	// A session not stored yet is created with the reply.
	b := started(2)
	if err := s.RecordReply(ctx, store.Reply{JournalID: b, Text: "r", Chunks: []string{"r"},
		Session: &store.SessionUpdate{Key: "new", Fn: turn}}); err != nil {
		t.Fatal(err)
	}
	if x, err := s.Session(ctx, "new"); err != nil || x.Turns != 1 || x.Key != "new" || x.CreatedAt.IsZero() {
		t.Fatalf("new session: %+v, %v", x, err)
	}
	if sawFound[len(sawFound)-1] {
		t.Fatal("the update saw found for a session not stored")
	}
	// The function's error fails the reply: neither is written.
	c := started(3)
	boom := errors.New("boom")
	err := s.RecordReply(ctx, store.Reply{JournalID: c, Text: "r", Chunks: []string{"r"},
		Session: &store.SessionUpdate{Key: "k", Fn: func(*store.Session, bool) error { return boom }}})
	if !errors.Is(err, boom) {
		t.Fatalf("RecordReply with a failing session update: %v", err)
	}
	if en, err := s.Entry(ctx, c); err != nil || en.State != store.StateProcessing {
		t.Fatalf("entry after the failed reply: %+v, %v", en, err)
	}
	// A reply the journal refuses (recorded already) leaves the session.
	if err := s.RecordReply(ctx, store.Reply{JournalID: a, Text: "again", Chunks: []string{"again"},
		Session: &store.SessionUpdate{Key: "k", Fn: turn}}); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("second reply to %d: %v", a, err)
	}
	if x, _ := s.Session(ctx, "k"); x.Turns != 2 {
		t.Fatalf("a refused reply changed the session: %d turns", x.Turns)
	}
	if err := s.RecordReply(ctx, store.Reply{JournalID: c, Text: "r", Session: &store.SessionUpdate{Fn: turn}}); err == nil {
		t.Fatal("a session update without a key was taken")
	}
	// claude's total of another claude session than the one the update
	// leaves the row with is not written; the update is.
	d := started(4)
	if err := s.RecordReply(ctx, store.Reply{JournalID: d, Text: "r", Chunks: []string{"r"},
		Session: &store.SessionUpdate{Key: "k", Fn: turn}, ClaudeCost: &store.ClaudeCost{Key: "k", Of: "c0", USD: 9}}); err != nil {
		t.Fatal(err)
	}
	if x, err := s.Session(ctx, "k"); err != nil || x.Turns != 3 || x.ClaudeCostUSD != 0.5 || x.ClaudeCostOf != "c1" {
		t.Fatalf("session after a reply with another claude session's total: %+v, %v; want 3 turns, claude's total still 0.5 of c1", x, err)
	}
	s.Close()
	s = e.open()
	if x, err := s.Session(ctx, "k"); err != nil || x.Turns != 3 || x.Model != "m" {
		t.Fatalf("session after a restart: %+v, %v", x, err)
	}
}
