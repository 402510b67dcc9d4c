package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
)

// RecordToolResult implements [store.ToolResults]: the first result of a
// key stays (INSERT OR IGNORE).
func (d *DB) RecordToolResult(ctx context.Context, r store.ToolResult) error {
	if err := checkToolResult(r); err != nil {
		return err
	}
	err := d.w.do(ctx, func(t *wtx) error {
		at := r.At
		if at.IsZero() {
			at = d.now()
		}
		_, err := t.exec(`INSERT OR IGNORE INTO tool_results(key, journal_id, result, at) VALUES (?, ?, ?, ?)`,
			r.Key, r.JournalID, r.Result, at.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	return nil
}

// ToolResult implements [store.ToolResults].
func (d *DB) ToolResult(ctx context.Context, key string) (store.ToolResult, error) {
	row, err := d.queryRow(ctx, `SELECT key, journal_id, result, at FROM tool_results WHERE key = ?`, key)
	if err != nil {
		return store.ToolResult{}, fmt.Errorf("tool result: %w", err)
	}
	var r store.ToolResult
	var at int64
	if err := row.Scan(&r.Key, &r.JournalID, &r.Result, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return store.ToolResult{}, store.ErrNotFound
		}
		return store.ToolResult{}, fmt.Errorf("tool result: %w", err)
	}
	r.At = store.FromUnixNano(at)
	return r, nil
}

// checkToolResult is what RecordToolResult requires of r.
func checkToolResult(r store.ToolResult) error {
	switch {
	case r.Key == "" || r.JournalID <= 0:
		return errors.New("record tool result: a key and a journal id are required")
	case len(r.Result) > store.MaxToolResult:
		return fmt.Errorf("record tool result: %d bytes, more than %d", len(r.Result), store.MaxToolResult)
	}
	return nil
}
