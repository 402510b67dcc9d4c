package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testAttemptsAndLive: MarkAttempt before a send, an uncertain MarkSent,
// the reply's send options and draft id kept, and the live output of a
// running turn (attempted, confirmed, a draft's text replaced, refused
// once the reply is recorded), all surviving a restart.
func testAttemptsAndLive(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	id := MustAccept(t, d, Msg(1))
	if err := d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if l, err := d.LiveOutput(ctx, id); err != nil || l != nil {
		t.Fatalf("LiveOutput before any = %v, %v", l, err)
	}
	steps := []store.Live{
		{JournalID: id, Seq: 0, Kind: store.LiveDraft, Text: "Hel"},
		{JournalID: id, Seq: 0, Kind: store.LiveDraft, Text: "Hel", PlatformIDs: []string{"m1"}},
		{JournalID: id, Seq: 0, Kind: store.LiveDraft, Text: "Hello"}, // an edit keeps the id
		{JournalID: id, Seq: 1, Kind: store.LiveBlock, Text: "block"}, // attempted, never confirmed
	}
	for _, l := range steps {
		if err := d.RecordLive(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.RecordLive(ctx, store.Live{JournalID: 4242, Kind: store.LiveDraft}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("live output of a missing entry: %v", err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: id, Text: "a b", Chunks: []string{"a", "b"}, Format: "plain", ReplyTo: "m0", DraftID: "m1"}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordLive(ctx, store.Live{JournalID: id, Seq: 0, Kind: store.LiveDraft, Text: "late"}); !errors.Is(err, store.ErrBadTransition) {
		t.Fatalf("live output after the reply: %v", err)
	}
	if err := d.MarkAttempt(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	if err := d.MarkAttempt(ctx, id, 9); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MarkAttempt of a missing chunk: %v", err)
	}
	if _, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 0, PlatformIDs: []string{"m1"}}); err != nil {
		t.Fatal(err)
	}

	d.Close()
	d = h.open()
	live, err := d.LiveOutput(ctx, id)
	if err != nil || len(live) != 2 {
		t.Fatalf("LiveOutput = %+v, %v", live, err)
	}
	if l := live[0]; l.Kind != store.LiveDraft || l.Text != "Hello" || !l.Confirmed() || l.PlatformIDs[0] != "m1" {
		t.Fatalf("draft = %+v", l)
	}
	if l := live[1]; l.Kind != store.LiveBlock || l.Confirmed() {
		t.Fatalf("block = %+v", l)
	}
	p, err := d.PendingReply(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reply.Format != "plain" || p.Reply.ReplyTo != "m0" || p.Reply.DraftID != "m1" {
		t.Fatalf("send options not kept: %+v", p.Reply)
	}
	if c := p.Chunks[1]; c.AttemptedAt.IsZero() || c.Sent() || c.Uncertain {
		t.Fatalf("attempted chunk = %+v", c)
	}
	if c := p.Chunks[0]; !c.AttemptedAt.IsZero() || !c.Sent() {
		t.Fatalf("draft chunk = %+v", c)
	}
	res, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 1, Uncertain: true})
	if err != nil || !res.AllSent {
		t.Fatalf("uncertain MarkSent = %+v, %v", res, err)
	}
	p, _ = d.PendingReply(ctx, id)
	if c := p.Chunks[1]; !c.Sent() || !c.Uncertain || len(c.PlatformIDs) != 0 {
		t.Fatalf("uncertain chunk = %+v", c)
	}
	if p.Entry.State != store.StateDone {
		t.Fatalf("entry = %s, want done", p.Entry.State)
	}
}

// testAttemptFirst: a reply recorded with AttemptFirst has chunk 0
// attempted (and only chunk 0), as a MarkAttempt after it would; a later
// MarkAttempt of it changes nothing; after a restart the chunk is still
// attempted and unsent (Recover's replies to deliver show it so, and
// delivery does not send it again); a reply without chunks ignores the
// flag.
func testAttemptFirst(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	id := MustAccept(t, d, Msg(1))
	if err := d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: id, Text: "a b", Chunks: []string{"a", "b"}, AttemptFirst: true}); err != nil {
		t.Fatal(err)
	}
	p, err := d.PendingReply(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	first := p.Chunks[0].AttemptedAt
	if first.IsZero() || p.Chunks[0].Sent() || !p.Chunks[1].AttemptedAt.IsZero() || p.Entry.State != store.StateReplied {
		t.Fatalf("after RecordReply with AttemptFirst: %+v, entry %s", p.Chunks, p.Entry.State)
	}
	if err := d.MarkAttempt(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if p, _ = d.PendingReply(ctx, id); !p.Chunks[0].AttemptedAt.Equal(first) {
		t.Fatalf("MarkAttempt again changed the attempt: %v → %v", first, p.Chunks[0].AttemptedAt)
	}
	none := MustAccept(t, d, Msg(2))
	if err := d.Start(ctx, none); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: none, AttemptFirst: true}); err != nil {
		t.Fatal(err)
	}
	if e, _ := d.Entry(ctx, none); e.State != store.StateDone {
		t.Fatalf("a reply without chunks: entry %s, want done", e.State)
	}

	d.Close()
	d = h.open()
	p, err = d.PendingReply(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Chunks[0]; c.AttemptedAt.IsZero() || c.Sent() {
		t.Fatalf("chunk 0 after a restart = %+v", c)
	}
	if c := p.Chunks[1]; !c.AttemptedAt.IsZero() || c.Sent() {
		t.Fatalf("chunk 1 after a restart = %+v", c)
	}
}

// testFinishFrom: Finish with From moves only the entries still in that
// state and leaves the others, without an error.
func testFinishFrom(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	a, b := MustAccept(t, d, Msg(1)), MustAccept(t, d, Msg(2))
	for _, id := range []int64{a, b} {
		if err := d.Enqueue(ctx, id, "k"); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Start(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(ctx, store.FinishRequest{IDs: []int64{a, b}, State: store.StateDropped, Reason: "queue full", From: store.StateQueued}); err != nil {
		t.Fatal(err)
	}
	if e, _ := d.Entry(ctx, a); e.State != store.StateProcessing {
		t.Errorf("started entry = %s, want processing", e.State)
	}
	if e, _ := d.Entry(ctx, b); e.State != store.StateDropped || e.Reason != "queue full" {
		t.Errorf("waiting entry = %s %q, want dropped", e.State, e.Reason)
	}
}

// testPairingGuesses: wrong codes are bounded: the one that reaches
// store.MaxWrongPairingGuesses voids every pending code and locks approvals
// for store.PairingGuessWindow.
func testPairingGuesses(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	r, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "s", TTL: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range store.MaxWrongPairingGuesses {
		if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: fmt.Sprintf("WRONG%03d", i)}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code}); !errors.Is(err, store.ErrTooManyAttempts) {
		t.Fatalf("approval while locked: %v", err)
	}
	h.clk.Advance(store.PairingGuessWindow + time.Second)
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the code pending during the guessing is void: %v", err)
	}
	r2, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r2.Code.Code}); err != nil {
		t.Fatalf("after the window a new code is approved: %v", err)
	}
}
