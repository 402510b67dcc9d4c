package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// Audit implements [store.AuditTrail].
func (d *DB) Audit(ctx context.Context, e store.AuditEvent) error {
	err := d.w.do(ctx, func(t *wtx) error {
		if e.At.IsZero() {
			e.At = d.now()
		}
		return tables.Audit(tablesTx{t}, e)
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// ListAudit implements [store.AuditTrail].
func (d *DB) ListAudit(ctx context.Context, f store.AuditFilter, limit int) ([]store.AuditEvent, error) {
	out, err := tables.ListAudit(d.adhoc(ctx), f, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// PruneAudit implements [store.AuditTrail].
func (d *DB) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := d.w.do(ctx, func(t *wtx) (err error) {
		n, err = tables.PruneAudit(tablesTx{t}, before)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}
