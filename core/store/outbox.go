package store

import (
	"context"
	"time"
)

// Outbox holds produced replies until every chunk has been sent.
type Outbox interface {
	// RecordReply stores the reply of a journal entry and its chunks and,
	// atomically with that, moves the entry to replied (to done if there
	// are no chunks) and the entries in Covers to done. The entry must be
	// accepted, queued or processing (else ErrBadTransition; a missing one
	// is ErrNotFound); an entry covering itself is an error. Call it as
	// soon as the run finished, before sending anything.
	RecordReply(ctx context.Context, r Reply) error
	// PendingReply returns a stored reply with its entry and its chunks'
	// delivery state, read consistently, or ErrNotFound (no such entry, or
	// no reply). The daemon does not call it (Recover returns the same
	// view for the replies still to deliver); it is kept as the one read of
	// a reply outside recovery, in any state: without it MarkSent's
	// first-record-wins and the survival of delivered chunks could not be
	// checked, and the conformance suite and the crash test check them.
	PendingReply(ctx context.Context, journalID int64) (PendingReply, error)
	// MarkSent records that a chunk was delivered. The first record wins:
	// marking a sent chunk again changes nothing. An unknown chunk is
	// ErrNotFound. When the last unsent chunk is marked the entry becomes
	// done (in the same atomic write) and AllSent is true.
	MarkSent(ctx context.Context, s ChunkSent) (MarkSentResult, error)
}

// Reply is a produced reply to one journal entry.
type Reply struct {
	// JournalID is the entry the reply answers.
	JournalID int64
	// Covers lists further entries answered by the same turn (collect
	// mode); they become done with the reply.
	Covers []int64
	// Instance, ChatID and ThreadID are the delivery target. Empty
	// Instance and ChatID mean the entry's own instance, chat and thread.
	Instance string
	ChatID   string
	ThreadID string
	// Text is the whole reply as produced.
	Text string
	// Chunks is Text split to the channel's limits, in send order. Stored
	// so that a resumed delivery sends exactly the chunks not yet sent.
	Chunks []string
	// ProducedAt is when the run produced it; zero means now. Recover
	// compares it with [RecoverOptions.StaleAfter].
	ProducedAt time.Time
}

// Chunk is one stored chunk of a reply and its delivery state.
type Chunk struct {
	// Index is the chunk's position in [Reply.Chunks], from 0.
	Index int
	// Text is the chunk as stored by RecordReply.
	Text string
	// SentAt is zero while the chunk is unsent.
	SentAt time.Time
	// PlatformIDs are the platform message ids Send returned.
	PlatformIDs []string
}

// Sent reports whether the chunk was delivered.
func (c Chunk) Sent() bool { return !c.SentAt.IsZero() }

// PendingReply is a reply with its entry and chunks.
type PendingReply struct {
	// Entry is the journal entry the reply answers.
	Entry Entry
	// Reply is the reply as recorded, with its target filled in; Covers
	// is not kept.
	Reply Reply
	// Chunks are Reply.Chunks with their delivery state, in order.
	Chunks []Chunk
}

// Unsent returns the chunks not yet delivered, in order.
func (p PendingReply) Unsent() []Chunk {
	var out []Chunk
	for _, c := range p.Chunks {
		if !c.Sent() {
			out = append(out, c)
		}
	}
	return out
}

// ChunkSent records the delivery of one chunk.
type ChunkSent struct {
	// JournalID is the entry whose reply the chunk belongs to.
	JournalID int64
	// Index is the chunk's [Chunk.Index].
	Index int
	// PlatformIDs are the platform message ids Send returned.
	PlatformIDs []string
	// SentAt is when it was sent; zero means now.
	SentAt time.Time
}

// MarkSentResult is the outcome of [Outbox.MarkSent].
type MarkSentResult struct {
	// AllSent: every chunk of the reply is delivered; the entry is done.
	AllSent bool
}
