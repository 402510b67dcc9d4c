package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// testParts: a reply of several messages (Reply.Parts) keeps every
// chunk's format and attachments through a restart, in PendingReply and
// in Recover's Deliver; a reply without parts reads back without them;
// parts that do not match the chunks are refused and change nothing.
func testParts(t *testing.T, h *env) {
	ctx := context.Background()
	d := h.open()
	id := MustAccept(t, d, store.Inbound{Instance: "tg", ChatID: "c", MessageID: "1"})
	if err := d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Parts that do not match the chunks: refused, nothing changed.
	bad := store.Reply{JournalID: id, Text: "a", Chunks: []string{"a", "b"}, Parts: []store.Part{{Format: "markdown"}}}
	if err := d.RecordReply(ctx, bad); err == nil {
		t.Fatal("RecordReply with 1 part for 2 chunks succeeded")
	}
	if e, _ := d.Entry(ctx, id); e.State != store.StateProcessing {
		t.Fatalf("entry after a refused reply = %s, want processing", e.State)
	}
	parts := []store.Part{
		{Format: "markdown"},
		{},
		{Format: "plain", Attach: []byte(`{"buttons":[[{"id":"/x","label":"X"}]]}`)},
		{Attach: []byte{0, 1, 2, 255}},
	}
	chunks := []string{"*one*", "two", "three", ""}
	if err := d.RecordReply(ctx, store.Reply{JournalID: id, Text: "several", Chunks: chunks, Parts: parts, Format: "plain", AttemptFirst: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 0, PlatformIDs: []string{"m0"}}); err != nil {
		t.Fatal(err)
	}
	// A reply without parts, in the same store.
	plain := MustAccept(t, d, Msg(2))
	d.Start(ctx, plain)
	if err := d.RecordReply(ctx, store.Reply{JournalID: plain, Text: "p", Chunks: []string{"p", "q"}}); err != nil {
		t.Fatal(err)
	}
	d.Close()

	d = h.open()
	check := func(what string, p store.PendingReply) {
		t.Helper()
		if len(p.Chunks) != len(parts) || len(p.Reply.Parts) != len(parts) || p.Reply.Format != "plain" {
			t.Fatalf("%s: %d chunks, %d parts, format %q", what, len(p.Chunks), len(p.Reply.Parts), p.Reply.Format)
		}
		for i, c := range p.Chunks {
			if c.Text != chunks[i] || c.Part.Format != parts[i].Format || !bytes.Equal(c.Part.Attach, parts[i].Attach) ||
				p.Reply.Parts[i].Format != parts[i].Format || !bytes.Equal(p.Reply.Parts[i].Attach, parts[i].Attach) {
				t.Fatalf("%s: chunk %d = %+v (reply part %+v), want %q %+v", what, i, c, p.Reply.Parts[i], chunks[i], parts[i])
			}
			if (c.Part.Attach == nil) != (parts[i].Attach == nil) {
				t.Fatalf("%s: chunk %d attach nil-ness differs: %v", what, i, c.Part.Attach)
			}
		}
		if !p.Chunks[0].Sent() || p.Chunks[1].Sent() || len(p.Unsent()) != 3 {
			t.Fatalf("%s: delivery state = %+v", what, p.Chunks)
		}
	}
	p, err := d.PendingReply(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	check("PendingReply", p)
	p, err = d.PendingReply(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reply.Parts != nil || p.Chunks[0].Part.Format != "" || p.Chunks[0].Part.Attach != nil {
		t.Fatalf("reply without parts came back with %+v / %+v", p.Reply.Parts, p.Chunks[0].Part)
	}
	rec, err := d.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rec.Deliver {
		if r.Entry.ID == id {
			found = true
			check("Recover", r)
		}
	}
	if !found {
		t.Fatalf("Recover did not return the reply of several messages: %+v", rec.Deliver)
	}
	for i := 1; i < len(parts); i++ {
		if _, err := d.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: i, PlatformIDs: []string{"m"}}); err != nil {
			t.Fatal(err)
		}
	}
	if e, _ := d.Entry(ctx, id); e.State != store.StateDone {
		t.Fatalf("entry after every part was sent = %s, want done", e.State)
	}
}
