package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Sessions maps session keys to claude sessions and their bookkeeping.
// Sessions are read from disk on demand; none are cached in memory.
type Sessions interface {
	// Session returns the session stored under key, or ErrNotFound.
	Session(ctx context.Context, key string) (Session, error)
	// UpdateSession reads the session under key, lets fn change it and
	// stores it, atomically with respect to every other write. fn gets a
	// zero Session with Key set and found false when there is none; it runs
	// on the writer goroutine, so it must be quick and must not call the
	// store; it may run more than once (when its group commit is retried)
	// and should only change s. An error from fn aborts the update and is
	// returned. UpdatedAt is set to now.
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
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// LastMessageAt is when the last inbound message of the session came.
	LastMessageAt time.Time
	// Turns counts completed claude turns.
	Turns int64
	// Usage is the accumulated token usage.
	Usage Usage
	// CostUSD is the accumulated cost reported by claude.
	CostUSD float64
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

// Usage counts tokens.
type Usage struct {
	InputTokens         int64
	OutputTokens        int64
	CacheReadTokens     int64
	CacheCreationTokens int64
}

// Target is a delivery address.
type Target struct {
	Instance string
	ChatID   string
	ThreadID string
}

const sessionCols = `key, session_id, claude_session_id, created_at, updated_at, last_message_at, turns,
	input_tokens, output_tokens, cache_read_tokens, cache_create_tokens, cost_usd, model, chat,
	target_instance, target_chat_id, target_thread_id, verbose, abort_hint, memory_flush_cycle`

const qSession = `SELECT ` + sessionCols + ` FROM sessions WHERE key = ?`

const qSessionPut = `INSERT INTO sessions(` + sessionCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT(key) DO UPDATE SET
		session_id = excluded.session_id, claude_session_id = excluded.claude_session_id,
		updated_at = excluded.updated_at, last_message_at = excluded.last_message_at,
		turns = excluded.turns, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
		cache_read_tokens = excluded.cache_read_tokens, cache_create_tokens = excluded.cache_create_tokens,
		cost_usd = excluded.cost_usd, model = excluded.model, chat = excluded.chat,
		target_instance = excluded.target_instance, target_chat_id = excluded.target_chat_id,
		target_thread_id = excluded.target_thread_id, verbose = excluded.verbose,
		abort_hint = excluded.abort_hint, memory_flush_cycle = excluded.memory_flush_cycle`

func scanSession(s scanner) (Session, error) {
	var x Session
	var created, updated, last int64
	err := s.Scan(&x.Key, &x.SessionID, &x.ClaudeSessionID, &created, &updated, &last, &x.Turns,
		&x.Usage.InputTokens, &x.Usage.OutputTokens, &x.Usage.CacheReadTokens, &x.Usage.CacheCreationTokens,
		&x.CostUSD, &x.Model, &x.Chat, &x.LastTarget.Instance, &x.LastTarget.ChatID, &x.LastTarget.ThreadID,
		&x.Verbose, &x.AbortHint, &x.MemoryFlushCycle)
	x.CreatedAt, x.UpdatedAt, x.LastMessageAt = fromNanos(created), fromNanos(updated), fromNanos(last)
	return x, err
}

func sessionArgs(x Session) []any {
	return []any{x.Key, x.SessionID, x.ClaudeSessionID, nanos(x.CreatedAt), nanos(x.UpdatedAt), nanos(x.LastMessageAt), x.Turns,
		x.Usage.InputTokens, x.Usage.OutputTokens, x.Usage.CacheReadTokens, x.Usage.CacheCreationTokens,
		x.CostUSD, x.Model, x.Chat, x.LastTarget.Instance, x.LastTarget.ChatID, x.LastTarget.ThreadID,
		x.Verbose, x.AbortHint, x.MemoryFlushCycle}
}

// Session implements [Sessions].
func (d *DB) Session(ctx context.Context, key string) (Session, error) {
	row, err := d.queryRow(ctx, qSession, key)
	if err != nil {
		return Session{}, fmt.Errorf("session %s: %w", key, err)
	}
	s, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("session %s: %w", key, err)
	}
	return s, nil
}

// UpdateSession implements [Sessions].
func (d *DB) UpdateSession(ctx context.Context, key string, fn func(s *Session, found bool) error) (Session, error) {
	if key == "" {
		return Session{}, errors.New("update session: empty key")
	}
	var out Session
	err := d.w.do(ctx, func(t *wtx) error {
		st, err := t.stmt(qSession)
		if err != nil {
			return err
		}
		s, err := scanSession(st.QueryRowContext(context.Background(), key))
		found := err == nil
		if errors.Is(err, sql.ErrNoRows) {
			s = Session{Key: key}
		} else if err != nil {
			return err
		}
		if err := fn(&s, found); err != nil {
			return err
		}
		now := d.now()
		s.Key = key
		if s.CreatedAt.IsZero() {
			s.CreatedAt = now
		}
		s.UpdatedAt = now
		if _, err := t.exec(qSessionPut, sessionArgs(s)...); err != nil {
			return err
		}
		out = s
		return nil
	})
	if err != nil {
		return Session{}, fmt.Errorf("update session %s: %w", key, err)
	}
	return out, nil
}

// RecentSessions implements [Sessions].
func (d *DB) RecentSessions(ctx context.Context, limit int) ([]Session, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := d.query(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY updated_at DESC, key LIMIT `+strconv.Itoa(limit))
	if err != nil {
		return nil, fmt.Errorf("recent sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("recent sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent sessions: %w", err)
	}
	return out, nil
}

// CountSessions implements [Sessions].
func (d *DB) CountSessions(ctx context.Context) (int, error) {
	row, err := d.queryRow(ctx, `SELECT count(*) FROM sessions`)
	var n int
	if err == nil {
		err = row.Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}
