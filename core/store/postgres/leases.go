package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
)

// qAcquire takes a free or expired lease, or extends the holder's own; a
// live lease of another holder matches no row (the WHERE of the upsert).
const qAcquire = `INSERT INTO leases(name, holder, info, epoch, acquired_at, renewed_at, expires_at)
	VALUES ($1, $2, $3, 1, $4, $4, $5)
	ON CONFLICT (name) DO UPDATE SET
		epoch = CASE WHEN leases.holder = excluded.holder THEN leases.epoch ELSE leases.epoch + 1 END,
		acquired_at = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > excluded.renewed_at
			THEN leases.acquired_at ELSE excluded.acquired_at END,
		holder = excluded.holder, info = excluded.info, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
	WHERE leases.holder = excluded.holder OR leases.expires_at <= excluded.renewed_at
	RETURNING ` + leaseCols

const leaseCols = `name, holder, info, epoch, acquired_at, renewed_at, expires_at`

func scanLease(row pgx.Row) (store.Lease, error) {
	var l store.Lease
	var acq, ren, exp int64
	err := row.Scan(&l.Name, &l.Holder, &l.Info, &l.Epoch, &acq, &ren, &exp)
	l.Acquired, l.Renewed, l.Expires = store.FromUnixNano(acq), store.FromUnixNano(ren), store.FromUnixNano(exp)
	return l, err
}

// AcquireLease implements [store.Leases].
func (d *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	if req.Name == "" || req.Holder == "" || req.TTL <= 0 {
		return store.Lease{}, errors.New("acquire lease: name, holder and a positive ttl are required")
	}
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return store.Lease{}, err
	}
	defer cancel()
	now := d.now()
	l, err := scanLease(d.pool.QueryRow(wctx, qAcquire, req.Name, req.Holder, req.Info, now.UnixNano(), now.Add(req.TTL).UnixNano()))
	if errors.Is(err, pgx.ErrNoRows) {
		l, err = scanLease(d.pool.QueryRow(wctx, `SELECT `+leaseCols+` FROM leases WHERE name = $1`, req.Name))
		if err == nil {
			return l, fmt.Errorf("lease %s: %w (%s, until %s)", req.Name, store.ErrLeaseHeld, l.Holder, l.Expires.Format("15:04:05.000"))
		}
	}
	if err != nil {
		return store.Lease{}, fmt.Errorf("acquire lease %s: %w", req.Name, d.closed(err))
	}
	return l, nil
}

// ReleaseLease implements [store.Leases].
func (d *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	now := d.now().UnixNano()
	if _, err := d.exec(ctx, `UPDATE leases SET expires_at = $1 WHERE name = $2 AND holder = $3 AND expires_at > $1`, now, name, holder); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// ListLeases implements [store.Leases].
func (d *DB) ListLeases(ctx context.Context, prefix string) ([]store.Lease, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+leaseCols+` FROM leases WHERE starts_with(name, $1) ORDER BY name`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", d.closed(err))
	}
	defer rows.Close()
	var out []store.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, fmt.Errorf("list leases: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}
