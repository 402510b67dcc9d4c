package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
)

const sessionCols = `key, session_id, claude_session_id, created_at, updated_at, last_message_at, turns,
	input_tokens, output_tokens, cache_read_tokens, cache_create_tokens, cost_usd, model, chat,
	target_instance, target_chat_id, target_thread_id, is_verbose, abort_hint, memory_flush_cycle,
	claude_cost_usd, claude_cost_of`

const qSession = `SELECT ` + sessionCols + ` FROM sessions WHERE key = $1`

func scanSession(row pgx.Row) (store.Session, error) {
	var x store.Session
	var created, updated, last int64
	err := row.Scan(&x.Key, &x.SessionID, &x.ClaudeSessionID, &created, &updated, &last, &x.Turns,
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
	s, err := scanSession(d.pool.QueryRow(ctx, qSession, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("session %s: %w", key, d.closed(err))
	}
	return s, nil
}

// errRaced: another writer created the session between our read and our
// insert; the update runs again and sees it.
var errRaced = errors.New("session created concurrently")

// UpdateSession implements [store.Sessions]. A stored session is locked
// (FOR UPDATE) while fn runs; a new one is inserted only if nobody
// inserted it meanwhile, else the update runs again on the stored one.
func (d *DB) UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error) {
	if key == "" {
		return store.Session{}, errors.New("update session: empty key")
	}
	var out store.Session
	var err error
	for range 10 {
		err = d.write(ctx, func(tx pgx.Tx) error {
			s, err := d.updateSession(ctx, tx, key, fn)
			out = s
			return err
		})
		if !errors.Is(err, errRaced) {
			break
		}
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("update session %s: %w", key, err)
	}
	return out, nil
}

// updateSession is UpdateSession's read-modify-write of key's row in tx
// (RecordReply's Reply.Session too); errRaced when a new row's insert
// lost to another writer's (the caller runs the transaction again).
func (d *DB) updateSession(ctx context.Context, tx pgx.Tx, key string, fn func(s *store.Session, found bool) error) (store.Session, error) {
	s, err := scanSession(tx.QueryRow(ctx, qSession+` FOR UPDATE`, key))
	found := err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		s = store.Session{Key: key}
	} else if err != nil {
		return store.Session{}, err
	}
	if err := fn(&s, found); err != nil {
		return store.Session{}, err
	}
	now := d.now()
	s.Key = key
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.UpdatedAt = now
	q := `INSERT INTO sessions(` + sessionCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`
	if found {
		q = `UPDATE sessions SET session_id = $2, claude_session_id = $3, created_at = $4, updated_at = $5, last_message_at = $6,
			turns = $7, input_tokens = $8, output_tokens = $9, cache_read_tokens = $10, cache_create_tokens = $11,
			cost_usd = $12, model = $13, chat = $14, target_instance = $15, target_chat_id = $16, target_thread_id = $17,
			is_verbose = $18, abort_hint = $19, memory_flush_cycle = $20,
			claude_cost_usd = $21, claude_cost_of = $22 WHERE key = $1`
	} else {
		q += ` ON CONFLICT (key) DO NOTHING`
	}
	tag, err := tx.Exec(ctx, q, sessionArgs(s)...)
	if err != nil {
		return store.Session{}, err
	}
	if tag.RowsAffected() == 0 {
		return store.Session{}, errRaced
	}
	return s, nil
}

// RecentSessions implements [store.Sessions].
func (d *DB) RecentSessions(ctx context.Context, limit int) ([]store.Session, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := d.pool.Query(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY updated_at DESC, key LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("recent sessions: %w", d.closed(err))
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
	var n int
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sessions: %w", d.closed(err))
	}
	return n, nil
}
