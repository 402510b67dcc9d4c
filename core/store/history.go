package store

import (
	"context"
	"time"
)

// History reads a chat's conversation back from the journal and the
// outbox (/export): what came in, in order, and what was answered. It
// holds what the journal still holds: finished entries are pruned after
// the journal's retention, and their replies with them.
type History interface {
	// ChatHistory returns the journal entries of one chat received at or
	// after f.Since, oldest first (by id), each with the reply recorded
	// for it and whether a turn ran for it. An entry answered by another's reply (collected into one
	// turn) or not answered at all has none. At most limit entries, the
	// newest ones, when limit > 0. It reads; it never blocks a writer for
	// long (one query).
	ChatHistory(ctx context.Context, f HistoryFilter, limit int) ([]HistoryEntry, error)
}

// HistoryFilter selects a chat's entries: Instance and ChatID (required),
// ThreadID ("" any thread), received at or after Since (zero: all).
type HistoryFilter struct {
	Instance, ChatID, ThreadID string
	Since                      time.Time
}

// HistoryEntry is a journal entry with its recorded reply.
type HistoryEntry struct {
	Entry
	// Replied is true when a reply was recorded for the entry; Reply is
	// its whole text and RepliedAt when the turn produced it.
	Replied   bool
	Reply     string
	RepliedAt time.Time
	// Ran is true when the usage ledger has a row for the entry: claude
	// ran a turn for it (its first entry; the others it covered have
	// none). A reply without it came from the host (a command's answer, a
	// budget's refusal).
	Ran bool
}
