package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// Audit implements [store.AuditTrail].
func (d *DB) Audit(ctx context.Context, e store.AuditEvent) error {
	if e.At.IsZero() {
		e.At = d.now()
	}
	err := d.write(ctx, func(tx pgx.Tx) error {
		return tables.Audit(tablesTx{ctx, tx}, e)
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// ListAudit implements [store.AuditTrail].
func (d *DB) ListAudit(ctx context.Context, f store.AuditFilter, limit int) ([]store.AuditEvent, error) {
	out, err := tables.ListAudit(d.reader(ctx), f, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// PruneAudit implements [store.AuditTrail].
func (d *DB) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := d.write(ctx, func(tx pgx.Tx) (err error) {
		n, err = tables.PruneAudit(tablesTx{ctx, tx}, before)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}
