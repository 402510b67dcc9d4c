package store

import (
	"context"
	"time"
)

// ToolResults remember the finished calls of plugin tools by their
// idempotency key (tool.CallRequest.IdempotencyKey), so that a turn run
// again after a crash ([Journal.Recover]'s processing → queued) that makes
// the same call gets the first call's result instead of acting twice. A
// result is kept as long as the journal keeps the turn's first entry
// ([ToolResult.JournalID]): [Journal.Prune] removes it with that entry.
type ToolResults interface {
	// RecordToolResult stores r under r.Key. A key stored before keeps its
	// first result (the call happened once; what it answered then is what
	// a repetition answers) and the call reports no error. Key and a
	// positive JournalID are required.
	RecordToolResult(ctx context.Context, r ToolResult) error
	// ToolResult returns the result stored under key, or [ErrNotFound].
	ToolResult(ctx context.Context, key string) (ToolResult, error)
}

// ToolResult is a finished tool call as ToolResults keep it.
type ToolResult struct {
	// Key is the call's idempotency key.
	Key string
	// JournalID is the journal entry of the turn that made the call (its
	// first); the result is pruned with it.
	JournalID int64
	// Result is the call's outcome, encoded by the caller (the store does
	// not read it).
	Result []byte
	// At is when the call finished; the store's clock sets it when zero.
	At time.Time
}

// MaxToolResult bounds a stored result's size: a larger one is refused by
// the engines (the caller then does not remember the call).
const MaxToolResult = 1 << 20
