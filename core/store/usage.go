package store

import (
	"context"
	"time"
)

// TurnUsage is one finished turn in the usage ledger: who and what it
// served, what claude reported it cost. [Outbox.RecordReply] writes it
// ([Reply.Usage]) in the transaction that finishes the turn, so a turn is
// counted exactly once: a crash before the reply leaves no row (the turn
// runs again and is counted then), a crash after leaves one.
type TurnUsage struct {
	// At is when the turn ended; zero means now.
	At time.Time
	// Agent is the agent that ran it ("" the default agent's id is used
	// by the caller).
	Agent string
	// Instance and ChatID are the chat; Sender is who started the turn:
	// "<instance>:<sender id>", or "schedule:<name>" / "heartbeat".
	Instance string
	ChatID   string
	Sender   string
	// Model is the model that answered ("" unknown).
	Model string
	// Tokens as claude reported them.
	InputTokens         int64
	OutputTokens        int64
	CacheReadTokens     int64
	CacheCreationTokens int64
	// CostUSD is the turn's own cost in US dollars: claude's per-turn
	// figure, or the difference of its running total to the previous
	// turn's in the same claude session; for a turn cut before claude's
	// result, its tokens at the model's prices (Estimate).
	CostUSD float64
	// Estimate: CostUSD is not claude's figure for the turn — a cut turn
	// priced from its tokens, or a row of a ledger that stored claude's
	// running totals, recomputed or kept by the migration.
	Estimate bool
	// Duration is how long the turn ran; Outcome is "ok" or the runner's
	// error kind.
	Duration time.Duration
	Outcome  string
}

// UsageFilter selects ledger rows: At in [Since, Until) (zero: open),
// and the fields set.
type UsageFilter struct {
	Since, Until time.Time
	Agent        string
	Instance     string
	ChatID       string
	Sender       string
}

// UsageSum is the sum of selected ledger rows.
type UsageSum struct {
	Turns               int     `json:"turns"`
	InputTokens         int64   `json:"input_tokens"`
	OutputTokens        int64   `json:"output_tokens"`
	CacheReadTokens     int64   `json:"cache_read_tokens"`
	CacheCreationTokens int64   `json:"cache_creation_tokens"`
	CostUSD             float64 `json:"cost_usd"`
	// Estimates counts the rows whose cost is an estimate
	// (TurnUsage.Estimate); EstimatedUSD is their part of CostUSD.
	Estimates    int     `json:"estimates,omitempty"`
	EstimatedUSD float64 `json:"estimated_usd,omitempty"`
	// MaxUSD is the costliest row's cost (a budget reserves it for each
	// turn that runs beside another).
	MaxUSD float64 `json:"-"`
}

// Add adds one row to s.
func (s *UsageSum) Add(u TurnUsage) {
	s.Turns++
	s.InputTokens += u.InputTokens
	s.OutputTokens += u.OutputTokens
	s.CacheReadTokens += u.CacheReadTokens
	s.CacheCreationTokens += u.CacheCreationTokens
	s.CostUSD += u.CostUSD
	s.MaxUSD = max(s.MaxUSD, u.CostUSD)
	if u.Estimate {
		s.Estimates++
		s.EstimatedUSD += u.CostUSD
	}
}

// Ledger is the usage ledger.
type Ledger interface {
	// SumUsage sums the rows f selects (a budget's check).
	SumUsage(ctx context.Context, f UsageFilter) (UsageSum, error)
	// ListUsage returns the rows f selects, oldest first, up to limit
	// (≤ 0: all) — for reports grouped by person, chat, agent or day.
	ListUsage(ctx context.Context, f UsageFilter, limit int) ([]TurnUsage, error)
}

// Matches reports whether f selects u (engines filter in SQL; tests and
// callers holding rows use this).
func (f UsageFilter) Matches(u TurnUsage) bool {
	switch {
	case !f.Since.IsZero() && u.At.Before(f.Since):
		return false
	case !f.Until.IsZero() && !u.At.Before(f.Until):
		return false
	case f.Agent != "" && u.Agent != f.Agent:
		return false
	case f.Instance != "" && u.Instance != f.Instance:
		return false
	case f.ChatID != "" && u.ChatID != f.ChatID:
		return false
	case f.Sender != "" && u.Sender != f.Sender:
		return false
	}
	return true
}
