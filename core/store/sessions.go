package store

import (
	"context"
	"time"
)

// Sessions maps session keys to claude sessions and their bookkeeping.
// Sessions are read from storage on demand; an engine caches none in
// memory, so their number is bounded by the storage, not by RAM.
type Sessions interface {
	// Session returns the session stored under key, or ErrNotFound.
	Session(ctx context.Context, key string) (Session, error)
	// UpdateSession reads the session under key, lets fn change it and
	// stores it, atomically with respect to every other write; it is the
	// only way to store a session. fn gets a zero Session with Key set and
	// found false when there is none. It runs while the engine holds the
	// write (in SQLite on the writer goroutine), so it must be quick and
	// must not call the store; it may run more than once (an engine may
	// retry the write) and should only change s. An error from fn aborts
	// the update, changes nothing and is returned. After fn, Key is reset to
	// key, a zero CreatedAt becomes now and UpdatedAt is set to now. An
	// empty key is an error.
	UpdateSession(ctx context.Context, key string, fn func(s *Session, found bool) error) (Session, error)
	// RecentSessions returns up to limit (≤ 0: 100) sessions, most recently
	// updated first (for status pages).
	RecentSessions(ctx context.Context, limit int) ([]Session, error)
	// CountSessions returns the number of stored sessions.
	CountSessions(ctx context.Context) (int, error)
}

// Session is the stored state of one conversation.
type Session struct {
	// Key is the session key the core derives from channel, chat and
	// thread.
	Key string
	// SessionID is the core's id of the current session under Key; a reset
	// (/new) gives a new one.
	SessionID string
	// ClaudeSessionID is the uuid passed to claude --session-id/--resume.
	ClaudeSessionID string
	// CreatedAt is when the session was first stored (see UpdateSession).
	CreatedAt time.Time
	// UpdatedAt is when UpdateSession last stored it.
	UpdatedAt time.Time
	// LastMessageAt is when the last inbound message of the session came.
	LastMessageAt time.Time
	// Turns counts completed claude turns.
	Turns int64
	// Usage is the accumulated token usage.
	Usage Usage
	// CostUSD is the accumulated cost of the session's turns (each turn's
	// own, as the usage ledger has it).
	CostUSD float64
	// ClaudeCostUSD is claude's running total (total_cost_usd) of the
	// claude session ClaudeCostOf as of its last result line: the
	// previous total a turn's cost is the difference to, when claude does
	// not report the turn's own. Written with the turn's reply and ledger
	// row, in one transaction ([Reply.ClaudeCost]), so it survives the
	// process (--resume continues the total), a restart and a kill -9,
	// and moves exactly when a turn is charged. ClaudeCostOf "" or another
	// session than ClaudeSessionID: not known.
	ClaudeCostUSD float64
	ClaudeCostOf  string
	// Model is the model of the last turn.
	Model string
	// Chat is chat metadata (channel, chat type, chat id, display names)
	// as JSON, opaque to the store.
	Chat []byte
	// LastTarget is where the last reply was delivered.
	LastTarget Target
	// Verbose is the session's /verbose flag.
	Verbose bool
	// AbortHint: the last run was aborted and the next prompt says so.
	AbortHint bool
	// MemoryFlushCycle marks the compaction cycle in which the last memory
	// flush ran, so a cycle is flushed once.
	MemoryFlushCycle int64
}

// ClaudeCost is claude's running total (total_cost_usd) of a claude
// session as of a turn's result ([Reply.ClaudeCost]).
type ClaudeCost struct {
	// Key is the session; Of the claude session (Session.ClaudeSessionID)
	// the total is of.
	Key, Of string
	USD     float64
}

// Usage counts tokens.
type Usage struct {
	// InputTokens are uncached input tokens.
	InputTokens int64
	// OutputTokens are generated tokens.
	OutputTokens int64
	// CacheReadTokens are input tokens read from the prompt cache.
	CacheReadTokens int64
	// CacheCreationTokens are input tokens written to the prompt cache.
	CacheCreationTokens int64
}

// Target is a delivery address.
type Target struct {
	// Instance is the plugin instance name.
	Instance string
	// ChatID is the platform chat.
	ChatID string
	// ThreadID is the thread or topic; empty for none.
	ThreadID string
}
