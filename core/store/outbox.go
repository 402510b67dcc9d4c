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
	// soon as the run finished, before sending anything. With
	// [Reply.AttemptFirst] it is also chunk 0's MarkAttempt, in the same
	// atomic write and as durable.
	RecordReply(ctx context.Context, r Reply) error
	// MarkAttempt records that a chunk is about to be handed to the
	// channel: call it, and let it return, before the first Send of the
	// chunk. A chunk attempted but never marked sent is uncertain after a
	// restart (the platform may have it): delivery does not send it again
	// (see the package documentation, "Delivery"). Marking an attempted or
	// sent chunk again changes nothing; an unknown chunk is ErrNotFound.
	MarkAttempt(ctx context.Context, journalID int64, index int) error
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
	// RecordLive stores (inserts or replaces) what a running turn showed
	// before its reply was recorded: the live draft (Seq 0) or a streamed
	// block (Seq ≥ 1). Call it before the message is sent (PlatformIDs
	// empty: attempted) and again once the channel answered (its ids), and
	// after each edit of a draft (its text). The entry must be accepted,
	// queued or processing (else ErrBadTransition; missing: ErrNotFound).
	RecordLive(ctx context.Context, l Live) error
	// LiveOutput returns the live output recorded for an entry, by Seq;
	// nil when none. A re-run (after a restart) reads it to continue the
	// draft instead of posting a second one.
	LiveOutput(ctx context.Context, journalID int64) ([]Live, error)
}

// LiveKind is the kind of a [Live] record.
type LiveKind string

// Live kinds.
const (
	// LiveDraft is the turn's live draft, edited in place (Seq 0).
	LiveDraft LiveKind = "draft"
	// LiveBlock is a block streamed as its own message (Seq ≥ 1).
	LiveBlock LiveKind = "block"
)

// Live is one message a turn showed while it ran, before its reply was
// recorded.
type Live struct {
	// JournalID is the entry whose turn showed it (the first of the batch).
	JournalID int64
	// Seq is 0 for the draft, 1, 2, … for streamed blocks in send order.
	Seq  int
	Kind LiveKind
	// Text is what the message shows (for a draft: its latest text).
	Text string
	// PlatformIDs are the ids the channel returned; empty while the send is
	// in flight or its outcome is unknown.
	PlatformIDs []string
}

// Confirmed reports whether the channel answered the send with an id.
func (l Live) Confirmed() bool { return len(l.PlatformIDs) > 0 }

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
	// Parts, when not nil, gives every chunk (by index: as many as
	// Chunks, else RecordReply fails and changes nothing) send options of
	// its own, for a reply of several messages (a command plugin's answer:
	// each message with its format, files and buttons). Nil: every chunk
	// is sent with the reply's Format and nothing attached.
	Parts []Part
	// Format and ReplyTo are the send options of the chunks (ReplyTo: of
	// the first), kept so a resumed delivery sends them alike.
	Format  string
	ReplyTo string
	// DraftID is the platform id of the turn's live draft, if any: chunk 0
	// is delivered by editing that message, never as a new one.
	DraftID string
	// ProducedAt is when the run produced it; zero means now. Recover
	// compares it with [RecoverOptions.StaleAfter].
	ProducedAt time.Time
	// Usage, when set, is the turn's row of the usage ledger, written in
	// the same transaction (a reply not produced by a turn has none).
	Usage *TurnUsage
	// ClaudeCost, when set, is claude's running total after the turn,
	// written to its session's row (Session.ClaudeCostUSD) in the same
	// transaction — unless the session moved to another claude session
	// meanwhile (a reset): the next turn's cost is the difference to it,
	// so it is durable exactly when the row it produced is.
	ClaudeCost *ClaudeCost
	// Session, when set, is a session's read-modify-write (the turn's
	// bookkeeping: turn count, usage totals, chat metadata) made in the
	// same transaction, before ClaudeCost, exactly as
	// [Sessions.UpdateSession](ctx, Session.Key, Session.Fn) would make it
	// on its own: one commit on a reply's path instead of two, and a
	// turn's bookkeeping is durable exactly when its reply is. An error of
	// Fn fails RecordReply, which then changes nothing. Fn may run more
	// than once (a store retries a transaction) and must only change s.
	Session *SessionUpdate
	// AttemptFirst records chunk 0 as attempted with the reply, as
	// [Outbox.MarkAttempt] would after it, and makes the write as durable
	// as MarkAttempt's: for a caller that hands chunk 0 to the channel
	// right after RecordReply returns (one durable write on the path of
	// a reply, not two). Ignored for a reply without chunks.
	AttemptFirst bool
}

// SessionUpdate is a read-modify-write of one session's row, as
// [Sessions.UpdateSession] takes it: Fn changes the stored session s
// (found false: none is stored, s holds only Key).
type SessionUpdate struct {
	Key string
	Fn  func(s *Session, found bool) error
}

// Part is what a chunk of a reply of several messages is sent with,
// beside its text ([Reply.Parts]). The store keeps it as written.
type Part struct {
	// Format is the chunk's format; "" means the reply's.
	Format string
	// Attach is what goes with the chunk (files, buttons), encoded by the
	// core; the store keeps it as opaque bytes. Nil: nothing.
	Attach []byte
}

// Chunk is one stored chunk of a reply and its delivery state.
type Chunk struct {
	// Index is the chunk's position in [Reply.Chunks], from 0.
	Index int
	// Text is the chunk as stored by RecordReply.
	Text string
	// Part is the chunk's own send options ([Reply.Parts]); zero when
	// the reply was recorded without them.
	Part Part
	// SentAt is zero while the chunk is unsent.
	SentAt time.Time
	// PlatformIDs are the platform message ids Send returned.
	PlatformIDs []string
	// AttemptedAt is when [Outbox.MarkAttempt] recorded the first Send;
	// zero if never attempted.
	AttemptedAt time.Time
	// Uncertain: the chunk was marked sent without the channel's
	// confirmation (its outcome is unknown; it is not sent again).
	Uncertain bool
}

// Sent reports whether the chunk was delivered.
func (c Chunk) Sent() bool { return !c.SentAt.IsZero() }

// PendingReply is a reply with its entry and chunks.
type PendingReply struct {
	// Entry is the journal entry the reply answers.
	Entry Entry
	// Reply is the reply as recorded, with its target filled in; Covers
	// is not kept. Parts is nil when every chunk's Part is zero.
	Reply Reply
	// Chunks are Reply.Chunks with their delivery state, in order.
	Chunks []Chunk
}

// PartsOf returns the chunks' parts, as [Reply.Parts] has them: nil when
// every one is zero. Engines fill PendingReply.Reply.Parts with it.
func PartsOf(chunks []Chunk) []Part {
	var parts []Part
	for i, c := range chunks {
		if c.Part.Format == "" && len(c.Part.Attach) == 0 {
			continue
		}
		if parts == nil {
			parts = make([]Part, len(chunks))
		}
		parts[i] = c.Part
	}
	return parts
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
	// Uncertain records that the outcome is unknown (the send may or may
	// not have reached the platform); the chunk counts as sent and is
	// never sent again.
	Uncertain bool
}

// MarkSentResult is the outcome of [Outbox.MarkSent].
type MarkSentResult struct {
	// AllSent: every chunk of the reply is delivered; the entry is done.
	AllSent bool
}
