package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
)

// RecordToolResult implements [store.ToolResults]: the first result of a
// key stays (ON CONFLICT DO NOTHING).
func (d *DB) RecordToolResult(ctx context.Context, r store.ToolResult) error {
	switch {
	case r.Key == "" || r.JournalID <= 0:
		return errors.New("record tool result: a key and a journal id are required")
	case len(r.Result) > store.MaxToolResult:
		return fmt.Errorf("record tool result: %d bytes, more than %d", len(r.Result), store.MaxToolResult)
	}
	at := r.At
	if at.IsZero() {
		at = d.now()
	}
	if _, err := d.exec(ctx, `INSERT INTO tool_results(key, journal_id, result, at) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING`,
		r.Key, r.JournalID, r.Result, at.UnixNano()); err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	return nil
}

// ToolResult implements [store.ToolResults].
func (d *DB) ToolResult(ctx context.Context, key string) (store.ToolResult, error) {
	var r store.ToolResult
	var at int64
	err := d.pool.QueryRow(ctx, `SELECT key, journal_id, result, at FROM tool_results WHERE key = $1`, key).Scan(&r.Key, &r.JournalID, &r.Result, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ToolResult{}, store.ErrNotFound
	}
	if err != nil {
		return store.ToolResult{}, fmt.Errorf("tool result: %w", d.closed(err))
	}
	r.At = store.FromUnixNano(at)
	return r, nil
}
