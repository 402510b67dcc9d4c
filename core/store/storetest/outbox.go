package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testOutbox: RecordReply with covered entries, chunk delivery state,
// first-record-wins MarkSent, the last chunk finishing the entry, and an
// empty reply with an explicit target.
func testOutbox(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	id := MustAccept(t, d, store.Inbound{Instance: "tg", ChatID: "c", ThreadID: "th", MessageID: "1"})
	cover := MustAccept(t, d, Msg(2))
	if err := d.Start(ctx, id, cover); err != nil {
		t.Fatal(err)
	}
	if _, err := d.PendingReply(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PendingReply before record: %v", err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: id, Covers: []int64{cover}, Text: "ab", Chunks: []string{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: id, Text: "again"}); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("second RecordReply: %v", err)
	}
	if e, _ := d.Entry(ctx, cover); e.State != store.StateDone {
		t.Fatalf("covered entry = %s, want done", e.State)
	}
	p, err := d.PendingReply(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Entry.State != store.StateReplied || p.Reply.Instance != "tg" || p.Reply.ChatID != "c" || p.Reply.ThreadID != "th" ||
		!p.Reply.ProducedAt.Equal(clk.Now()) || len(p.Chunks) != 3 || len(p.Unsent()) != 3 || p.Reply.Text != "ab" {
		t.Fatalf("pending reply = %+v", p)
	}
	clk.Advance(time.Second)
	r, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 1, PlatformIDs: []string{"p1"}})
	if err != nil || r.AllSent {
		t.Fatalf("MarkSent 1 = %+v, %v", r, err)
	}
	// The first record wins.
	if _, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 1, PlatformIDs: []string{"other"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 7}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MarkSent missing chunk: %v", err)
	}
	p, _ = d.PendingReply(ctx, id)
	if c := p.Chunks[1]; !c.Sent() || len(c.PlatformIDs) != 1 || c.PlatformIDs[0] != "p1" || !c.SentAt.Equal(clk.Now()) {
		t.Fatalf("chunk 1 = %+v", c)
	}
	if u := p.Unsent(); len(u) != 2 || u[0].Index != 0 || u[1].Index != 2 {
		t.Fatalf("unsent = %+v", u)
	}
	d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 0, PlatformIDs: []string{"p0"}})
	r, err = d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 2, PlatformIDs: []string{"p2a", "p2b"}})
	if err != nil || !r.AllSent {
		t.Fatalf("last MarkSent = %+v, %v", r, err)
	}
	if e, _ := d.Entry(ctx, id); e.State != store.StateDone {
		t.Fatalf("entry after all sent = %s", e.State)
	}

	// An empty reply (NO_REPLY) finishes the entry at once; an explicit
	// target is kept.
	id2 := MustAccept(t, d, Msg(3))
	d.Start(ctx, id2)
	if err := d.RecordReply(ctx, store.Reply{JournalID: id2, Instance: "dc", ChatID: "z"}); err != nil {
		t.Fatal(err)
	}
	p, _ = d.PendingReply(ctx, id2)
	if p.Entry.State != store.StateDone || p.Reply.Instance != "dc" || len(p.Chunks) != 0 {
		t.Fatalf("empty reply = %+v", p)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: 4242}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reply to missing entry: %v", err)
	}
}
