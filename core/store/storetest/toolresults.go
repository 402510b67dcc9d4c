package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testToolResults: a recorded tool result is read back by its key (At from
// the store's clock), survives a restart, keeps its first result when the
// key is recorded again, needs a key and a journal id, refuses more than
// MaxToolResult bytes, and is pruned with the journal entry of its turn
// (not before).
func testToolResults(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.open()
	turn := MustAccept(t, s, Msg(1))
	other := MustAccept(t, s, Msg(2))
	if _, err := s.ToolResult(ctx, "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown key: %v, want ErrNotFound", err)
	}
	if err := s.RecordToolResult(ctx, store.ToolResult{Key: "k1", JournalID: turn, Result: []byte(`{"text":"first"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolResult(ctx, store.ToolResult{Key: "k1", JournalID: turn, Result: []byte(`{"text":"second"}`)}); err != nil {
		t.Fatalf("a key recorded again: %v", err)
	}
	if err := s.RecordToolResult(ctx, store.ToolResult{Key: "k2", JournalID: other, Result: []byte(`{}`), At: e.clk.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []store.ToolResult{{JournalID: turn, Result: []byte("x")}, {Key: "k3", Result: []byte("x")},
		{Key: "k4", JournalID: turn, Result: []byte(strings.Repeat("x", store.MaxToolResult+1))}} {
		if err := s.RecordToolResult(ctx, bad); err == nil {
			t.Errorf("RecordToolResult(key %q, journal %d, %d bytes) took it", bad.Key, bad.JournalID, len(bad.Result))
		}
	}
	s.Close()
	s = e.open()
	r, err := s.ToolResult(ctx, "k1")
	if err != nil || r.Key != "k1" || r.JournalID != turn || string(r.Result) != `{"text":"first"}` || !r.At.Equal(e.clk.Now()) {
		t.Fatalf("ToolResult(k1) = %+v, %v; want the first result, at the store's now", r, err)
	}
	if _, err := s.ToolResult(ctx, "k4"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused result was stored: %v", err)
	}

	// Pruned with the turn's entry, and only with it.
	if err := s.Finish(ctx, store.FinishRequest{IDs: []int64{turn}, State: store.StateDropped}); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Hour)
	if _, err := s.Prune(ctx, e.clk.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ToolResult(ctx, "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the result of a pruned turn: %v, want ErrNotFound", err)
	}
	if r, err := s.ToolResult(ctx, "k2"); err != nil || string(r.Result) != `{}` {
		t.Errorf("the result of an open turn: %+v, %v", r, err)
	}
}
