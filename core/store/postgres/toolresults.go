package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// RecordToolResult implements [store.ToolResults]: the first result of a
// key stays.
func (d *DB) RecordToolResult(ctx context.Context, r store.ToolResult) error {
	if err := tables.CheckToolResult(r); err != nil {
		return err
	}
	if r.At.IsZero() {
		r.At = d.now()
	}
	if err := d.write(ctx, func(tx pgx.Tx) error { return tables.RecordToolResult(tablesTx{ctx, tx}, r) }); err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	return nil
}

// ToolResult implements [store.ToolResults].
func (d *DB) ToolResult(ctx context.Context, key string) (store.ToolResult, error) {
	r, err := tables.ToolResult(d.reader(ctx), key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.ToolResult{}, fmt.Errorf("tool result: %w", err)
	}
	return r, err
}
