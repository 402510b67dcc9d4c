package sqlite

import (
	"context"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// AcquireLease implements [store.Leases].
func (d *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (l store.Lease, err error) {
	if err := tables.CheckLease(req); err != nil {
		return store.Lease{}, err
	}
	var held bool
	err = d.w.do(ctx, func(t *wtx) (err error) {
		l, held, err = tables.AcquireLease(tablesTx{t}, req, d.now())
		return err
	})
	if err != nil {
		return store.Lease{}, fmt.Errorf("acquire lease %s: %w", req.Name, err)
	}
	if held {
		return l, tables.LeaseHeld(l)
	}
	return l, nil
}

// ReleaseLease implements [store.Leases].
func (d *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := d.w.do(ctx, func(t *wtx) error { return tables.ReleaseLease(tablesTx{t}, name, holder, d.now()) }); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// ListLeases implements [store.Leases].
func (d *DB) ListLeases(ctx context.Context, prefix string) ([]store.Lease, error) {
	return tables.ListLeases(d.reader(ctx), prefix)
}
