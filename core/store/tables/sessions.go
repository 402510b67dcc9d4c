package tables

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Sessions holds the sessions table's queries as one engine's schema
// spells them: PostgreSQL's verbose column is is_verbose (VERBOSE is one
// of its keywords).
type Sessions struct {
	cols, qRow, qInsert, qUpdate string
}

// NewSessions is the sessions table of an engine whose verbose flag is
// the column verbose.
func NewSessions(verbose string) Sessions {
	cols := `key, session_id, claude_session_id, created_at, updated_at, last_message_at, turns,
	input_tokens, output_tokens, cache_read_tokens, cache_create_tokens, cost_usd, model, chat,
	target_instance, target_chat_id, target_thread_id, ` + verbose + `, abort_hint, memory_flush_cycle,
	claude_cost_usd, claude_cost_of`
	return Sessions{
		cols: cols,
		qRow: `SELECT ` + cols + ` FROM sessions WHERE key = ?`,
		qInsert: `INSERT INTO sessions(` + cols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING`,
		// The row's key and created_at stay.
		qUpdate: `UPDATE sessions SET session_id = ?, claude_session_id = ?, updated_at = ?, last_message_at = ?, turns = ?,
	input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_create_tokens = ?, cost_usd = ?, model = ?, chat = ?,
	target_instance = ?, target_chat_id = ?, target_thread_id = ?, ` + verbose + ` = ?, abort_hint = ?, memory_flush_cycle = ?,
	claude_cost_usd = ?, claude_cost_of = ?
	WHERE key = ?`,
	}
}

// sessionRow is a session as its columns are read.
type sessionRow struct {
	s                      store.Session
	created, updated, last int64
}

func (x *sessionRow) dest() []any {
	s := &x.s
	return []any{&s.Key, &s.SessionID, &s.ClaudeSessionID, &x.created, &x.updated, &x.last, &s.Turns,
		&s.Usage.InputTokens, &s.Usage.OutputTokens, &s.Usage.CacheReadTokens, &s.Usage.CacheCreationTokens,
		&s.CostUSD, &s.Model, &s.Chat, &s.LastTarget.Instance, &s.LastTarget.ChatID, &s.LastTarget.ThreadID,
		&s.Verbose, &s.AbortHint, &s.MemoryFlushCycle, &s.ClaudeCostUSD, &s.ClaudeCostOf}
}

func (x *sessionRow) session() store.Session {
	x.s.CreatedAt, x.s.UpdatedAt, x.s.LastMessageAt = store.FromUnixNano(x.created), store.FromUnixNano(x.updated), store.FromUnixNano(x.last)
	return x.s
}

// Row is the session under key (lock appended to the query: " FOR
// UPDATE" or ""); found false and s holding only the key when there is
// none.
func (q Sessions) Row(r Reader, key, lock string) (s store.Session, found bool, err error) {
	var x sessionRow
	err = r.Scan(q.qRow+lock, []any{key}, x.dest()...)
	if errors.Is(err, ErrNoRows) {
		return store.Session{Key: key}, false, nil
	}
	if err != nil {
		return store.Session{}, false, err
	}
	return x.session(), true, nil
}

// Session is [store.Sessions]' Session, its error naming the key.
func (q Sessions) Session(r Reader, key string) (store.Session, error) {
	s, found, err := q.Row(r, key, "")
	if err == nil && !found {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("session %s: %w", key, err)
	}
	return s, nil
}

// ApplySession runs an update's fn on s (found: s is the stored row) and stamps
// the result at now, under key.
func ApplySession(s *store.Session, found bool, key string, fn func(s *store.Session, found bool) error, now time.Time) error {
	if err := fn(s, found); err != nil {
		return err
	}
	s.Key = key
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.UpdatedAt = now
	return nil
}

// Write stores s inside t: an update of the stored row when found, else
// an insert that changes nothing (n 0) when a row of its key exists.
func (q Sessions) Write(t Tx, s store.Session, found bool) (n int64, err error) {
	if found {
		return t.Exec(q.qUpdate, s.SessionID, s.ClaudeSessionID, store.UnixNano(s.UpdatedAt), store.UnixNano(s.LastMessageAt), s.Turns,
			s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheCreationTokens,
			s.CostUSD, s.Model, s.Chat, s.LastTarget.Instance, s.LastTarget.ChatID, s.LastTarget.ThreadID,
			s.Verbose, s.AbortHint, s.MemoryFlushCycle, s.ClaudeCostUSD, s.ClaudeCostOf, s.Key)
	}
	return t.Exec(q.qInsert, s.Key, s.SessionID, s.ClaudeSessionID, store.UnixNano(s.CreatedAt), store.UnixNano(s.UpdatedAt), store.UnixNano(s.LastMessageAt), s.Turns,
		s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheCreationTokens,
		s.CostUSD, s.Model, s.Chat, s.LastTarget.Instance, s.LastTarget.ChatID, s.LastTarget.ThreadID,
		s.Verbose, s.AbortHint, s.MemoryFlushCycle, s.ClaudeCostUSD, s.ClaudeCostOf)
}

// Recent is [store.Sessions]' RecentSessions: the last updated first, at
// most limit (0: 100), the limit written into the SQL (see ListPending).
func (q Sessions) Recent(r Reader, limit int) ([]store.Session, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := r.Query(`SELECT ` + q.cols + ` FROM sessions ORDER BY updated_at DESC, key LIMIT ` + strconv.Itoa(limit))
	out, err := collect(rows, err, func(rows Rows) (store.Session, error) {
		var x sessionRow
		err := rows.Scan(x.dest()...)
		return x.session(), err
	})
	if err != nil {
		return nil, fmt.Errorf("recent sessions: %w", err)
	}
	return out, nil
}

// CountSessions is [store.Sessions]' CountSessions.
func CountSessions(r Reader) (int, error) {
	var n int
	if err := r.Scan(`SELECT count(*) FROM sessions`, nil, &n); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}
