package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testSessions: every field round-trips, UpdateSession is a
// read-modify-write that creates, keeps CreatedAt and applies nothing when
// fn fails; CountSessions counts.
func testSessions(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	if _, err := d.Session(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
	s := store.Session{
		Key: "agent:main:tg:dm:1", SessionID: "sid", ClaudeSessionID: "0b6c3f1e-0000-4000-8000-000000000001",
		LastMessageAt: clk.Now().Add(-time.Minute), Turns: 3,
		Usage:   store.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheCreationTokens: 4},
		CostUSD: 0.25, Model: "claude-sonnet", Chat: []byte(`{"chat_type":"dm"}`),
		LastTarget: store.Target{Instance: "tg", ChatID: "1", ThreadID: "2"}, Verbose: true, AbortHint: true, MemoryFlushCycle: 7,
		ClaudeCostUSD: 0.84, ClaudeCostOf: "0b6c3f1e-0000-4000-8000-000000000001",
	}
	PutSession(t, d, s)
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
	if _, err := d.UpdateSession(ctx, s.Key, func(x *store.Session, _ bool) error { x.Turns, x.Verbose = 4, false; return nil }); err != nil {
		t.Fatal(err)
	}
	got, _ = d.Session(ctx, s.Key)
	if !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(clk.Now()) || got.Turns != 4 || got.Verbose {
		t.Fatalf("after second update: %+v", got)
	}
	// UpdateSession: read-modify-write, also creating.
	got, err = d.UpdateSession(ctx, s.Key, func(x *store.Session, found bool) error {
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
	if _, err := d.UpdateSession(ctx, "new", func(x *store.Session, found bool) error {
		if found {
			return errors.New("found")
		}
		x.SessionID = "n"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := d.UpdateSession(ctx, "new", func(x *store.Session, _ bool) error { x.SessionID = "changed"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateSession fn error: %v", err)
	}
	if x, _ := d.Session(ctx, "new"); x.SessionID != "n" {
		t.Fatalf("failed update was applied: %+v", x)
	}
	for i := range 25 {
		PutSession(t, d, store.Session{Key: fmt.Sprintf("p%02d", i)})
	}
	if n, _ := d.CountSessions(ctx); n != 27 {
		t.Fatalf("CountSessions = %d, want 27", n)
	}
	if _, err := d.UpdateSession(ctx, "", func(*store.Session, bool) error { return nil }); err == nil {
		t.Fatal("UpdateSession without key succeeded")
	}
}

// normTimes puts a session's times in UTC, so that %+v compares instants.
func normTimes(s store.Session) store.Session {
	s.CreatedAt, s.UpdatedAt, s.LastMessageAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC(), s.LastMessageAt.UTC()
	return s
}

// testRecentSessionsAndPendingCounts: the two status-page queries.
func testRecentSessionsAndPendingCounts(t *testing.T, h *env) {
	db := h.open()
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		h.clk.Advance(time.Minute)
		PutSession(t, db, store.Session{Key: k})
	}
	got, err := db.RecentSessions(ctx, 2)
	if err != nil || len(got) != 2 || got[0].Key != "c" || got[1].Key != "b" {
		t.Fatalf("recent: %v %+v", err, got)
	}
	for i, key := range []string{"a", "a", "c"} {
		res, err := db.Accept(ctx, store.Inbound{Instance: "lo", ChatID: "x", MessageID: fmt.Sprint(i)})
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
