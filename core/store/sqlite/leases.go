package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
)

const leaseCols = `name, holder, info, epoch, acquired_at, renewed_at, expires_at`

// qAcquire takes a free or expired lease, or extends the holder's own; a
// live lease of another holder matches no row (the WHERE of the upsert).
const qAcquire = `INSERT INTO leases(name, holder, info, epoch, acquired_at, renewed_at, expires_at)
	VALUES (?1, ?2, ?3, 1, ?4, ?4, ?5)
	ON CONFLICT(name) DO UPDATE SET
		epoch = CASE WHEN leases.holder = excluded.holder THEN leases.epoch ELSE leases.epoch + 1 END,
		acquired_at = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > excluded.renewed_at
			THEN leases.acquired_at ELSE excluded.acquired_at END,
		holder = excluded.holder, info = excluded.info, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
	WHERE leases.holder = excluded.holder OR leases.expires_at <= excluded.renewed_at
	RETURNING ` + leaseCols

func scanLease(s scanner) (store.Lease, error) {
	var l store.Lease
	var acq, ren, exp int64
	err := s.Scan(&l.Name, &l.Holder, &l.Info, &l.Epoch, &acq, &ren, &exp)
	l.Acquired, l.Renewed, l.Expires = store.FromUnixNano(acq), store.FromUnixNano(ren), store.FromUnixNano(exp)
	return l, err
}

// AcquireLease implements [store.Leases].
func (d *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	if req.Name == "" || req.Holder == "" || req.TTL <= 0 {
		return store.Lease{}, errors.New("acquire lease: name, holder and a positive ttl are required")
	}
	var l store.Lease
	var held bool
	err := d.w.do(ctx, func(t *wtx) error {
		now := d.now()
		var err error
		held = false
		l, err = scanLease(t.row(qAcquire, req.Name, req.Holder, req.Info, now.UnixNano(), now.Add(req.TTL).UnixNano()))
		if errors.Is(err, sql.ErrNoRows) {
			held = true
			l, err = scanLease(t.row(`SELECT `+leaseCols+` FROM leases WHERE name = ?`, req.Name))
		}
		return err
	})
	if err != nil {
		return store.Lease{}, fmt.Errorf("acquire lease %s: %w", req.Name, err)
	}
	if held {
		return l, fmt.Errorf("lease %s: %w (%s, until %s)", req.Name, store.ErrLeaseHeld, l.Holder, l.Expires.Format("15:04:05.000"))
	}
	return l, nil
}

// ReleaseLease implements [store.Leases].
func (d *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	err := d.w.do(ctx, func(t *wtx) error {
		now := d.now().UnixNano()
		_, err := t.exec(`UPDATE leases SET expires_at = ?1 WHERE name = ?2 AND holder = ?3 AND expires_at > ?1`, now, name, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// ListLeases implements [store.Leases].
func (d *DB) ListLeases(ctx context.Context, prefix string) ([]store.Lease, error) {
	rows, err := d.query(ctx, `SELECT `+leaseCols+` FROM leases WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
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
