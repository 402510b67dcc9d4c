package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

const sessionCols = `key, session_id, claude_session_id, created_at, updated_at, last_message_at, turns,
	input_tokens, output_tokens, cache_read_tokens, cache_create_tokens, cost_usd, model, chat,
	target_instance, target_chat_id, target_thread_id, verbose, abort_hint, memory_flush_cycle,
	claude_cost_usd, claude_cost_of`

const qSession = `SELECT ` + sessionCols + ` FROM sessions WHERE key = ?`

const qSessionPut = `INSERT INTO sessions(` + sessionCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT(key) DO UPDATE SET
		session_id = excluded.session_id, claude_session_id = excluded.claude_session_id,
		updated_at = excluded.updated_at, last_message_at = excluded.last_message_at,
		turns = excluded.turns, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
		cache_read_tokens = excluded.cache_read_tokens, cache_create_tokens = excluded.cache_create_tokens,
		cost_usd = excluded.cost_usd, model = excluded.model, chat = excluded.chat,
		target_instance = excluded.target_instance, target_chat_id = excluded.target_chat_id,
		target_thread_id = excluded.target_thread_id, verbose = excluded.verbose,
		abort_hint = excluded.abort_hint, memory_flush_cycle = excluded.memory_flush_cycle,
		claude_cost_usd = excluded.claude_cost_usd, claude_cost_of = excluded.claude_cost_of`

// qSessionSet rewrites an existing session: cheaper than qSessionPut's
// insert that conflicts and then updates. Arguments: sessionArgs minus the
// key and created_at, then the key.
const qSessionSet = `UPDATE sessions SET session_id = ?, claude_session_id = ?, updated_at = ?, last_message_at = ?, turns = ?,
	input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_create_tokens = ?, cost_usd = ?, model = ?, chat = ?,
	target_instance = ?, target_chat_id = ?, target_thread_id = ?, verbose = ?, abort_hint = ?, memory_flush_cycle = ?,
	claude_cost_usd = ?, claude_cost_of = ?
	WHERE key = ?`

func scanSession(s scanner) (store.Session, error) {
	var x store.Session
	var created, updated, last int64
	err := s.Scan(&x.Key, &x.SessionID, &x.ClaudeSessionID, &created, &updated, &last, &x.Turns,
		&x.Usage.InputTokens, &x.Usage.OutputTokens, &x.Usage.CacheReadTokens, &x.Usage.CacheCreationTokens,
		&x.CostUSD, &x.Model, &x.Chat, &x.LastTarget.Instance, &x.LastTarget.ChatID, &x.LastTarget.ThreadID,
		&x.Verbose, &x.AbortHint, &x.MemoryFlushCycle, &x.ClaudeCostUSD, &x.ClaudeCostOf)
	x.CreatedAt, x.UpdatedAt, x.LastMessageAt = store.FromUnixNano(created), store.FromUnixNano(updated), store.FromUnixNano(last)
	return x, err
}

func sessionArgs(x store.Session) []any {
	return []any{x.Key, x.SessionID, x.ClaudeSessionID, store.UnixNano(x.CreatedAt), store.UnixNano(x.UpdatedAt), store.UnixNano(x.LastMessageAt), x.Turns,
		x.Usage.InputTokens, x.Usage.OutputTokens, x.Usage.CacheReadTokens, x.Usage.CacheCreationTokens,
		x.CostUSD, x.Model, x.Chat, x.LastTarget.Instance, x.LastTarget.ChatID, x.LastTarget.ThreadID,
		x.Verbose, x.AbortHint, x.MemoryFlushCycle, x.ClaudeCostUSD, x.ClaudeCostOf}
}

// Session implements [store.Sessions].
func (d *DB) Session(ctx context.Context, key string) (store.Session, error) {
	cached, ok, stamp := d.sessions.get(key)
	if ok {
		return cached, nil
	}
	row, err := d.queryRow(ctx, qSession, key)
	if err != nil {
		return store.Session{}, fmt.Errorf("session %s: %w", key, err)
	}
	s, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("session %s: %w", key, err)
	}
	d.sessions.fill(s, stamp)
	return s, nil
}

// sessionRow is the session under key as this transaction sees it
// (found false: none, s holds only the key).
func (t *wtx) sessionRow(key string) (s store.Session, found bool, err error) {
	if s, found = t.session(key); found {
		return s, true, nil
	}
	st, err := t.stmt(qSession)
	if err != nil {
		return s, false, err
	}
	s, err = scanSession(st.QueryRowContext(context.Background(), key))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{Key: key}, false, nil
	}
	return s, err == nil, err
}

// setClaudeCost writes c to its session's row, unless that row is gone or
// of another claude session ([store.Reply.ClaudeCost]).
func (t *wtx) setClaudeCost(c store.ClaudeCost) error {
	s, found, err := t.sessionRow(c.Key)
	if err != nil || !found || s.ClaudeSessionID != c.Of {
		return err
	}
	s.ClaudeCostUSD, s.ClaudeCostOf = c.USD, c.Of
	if _, err := t.exec(`UPDATE sessions SET claude_cost_usd = ?, claude_cost_of = ? WHERE key = ?`, c.USD, c.Of, c.Key); err != nil {
		return err
	}
	t.wroteSession(s)
	return nil
}

// UpdateSession implements [store.Sessions].
func (d *DB) UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error) {
	if key == "" {
		return store.Session{}, errors.New("update session: empty key")
	}
	var out store.Session
	err := d.w.do(ctx, func(t *wtx) error {
		s, err := t.updateSession(key, fn, d.now())
		out = s
		return err
	})
	if err != nil {
		return store.Session{}, fmt.Errorf("update session %s: %w", key, err)
	}
	return out, nil
}

// updateSession is UpdateSession's read-modify-write of key's row in this
// transaction (RecordReply's Reply.Session too), at now.
func (t *wtx) updateSession(key string, fn func(s *store.Session, found bool) error, now time.Time) (store.Session, error) {
	s, found, err := t.sessionRow(key)
	if err != nil {
		return store.Session{}, err
	}
	if err := fn(&s, found); err != nil {
		return store.Session{}, err
	}
	s.Key = key
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.UpdatedAt = now
	q, args := qSessionPut, sessionArgs(s)
	if found {
		set := append([]any{args[1], args[2], args[4]}, args[5:]...)
		q, args = qSessionSet, append(set, key)
	}
	if _, err := t.exec(q, args...); err != nil {
		return store.Session{}, err
	}
	t.wroteSession(s)
	return s, nil
}

// RecentSessions implements [store.Sessions].
func (d *DB) RecentSessions(ctx context.Context, limit int) ([]store.Session, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := d.query(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY updated_at DESC, key LIMIT `+strconv.Itoa(limit))
	if err != nil {
		return nil, fmt.Errorf("recent sessions: %w", err)
	}
	defer rows.Close()
	var out []store.Session
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

// CountSessions implements [store.Sessions].
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
