package tables

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/store"
)

const leaseCols = `name, holder, info, epoch, acquired_at, renewed_at, expires_at`

// qAcquire takes a free or expired lease, or extends the holder's own; a
// live lease of another holder matches no row (the WHERE of the upsert).
const qAcquire = `INSERT INTO leases(name, holder, info, epoch, acquired_at, renewed_at, expires_at)
	VALUES (?, ?, ?, 1, ?, ?, ?)
	ON CONFLICT(name) DO UPDATE SET
		epoch = CASE WHEN leases.holder = excluded.holder THEN leases.epoch ELSE leases.epoch + 1 END,
		acquired_at = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > excluded.renewed_at
			THEN leases.acquired_at ELSE excluded.acquired_at END,
		holder = excluded.holder, info = excluded.info, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
	WHERE leases.holder = excluded.holder OR leases.expires_at <= excluded.renewed_at
	RETURNING ` + leaseCols

// leaseRow is a lease as its columns are read.
type leaseRow struct {
	l             store.Lease
	acq, ren, exp int64
}

func (x *leaseRow) dest() []any {
	return []any{&x.l.Name, &x.l.Holder, &x.l.Info, &x.l.Epoch, &x.acq, &x.ren, &x.exp}
}

func (x *leaseRow) lease() store.Lease {
	x.l.Acquired, x.l.Renewed, x.l.Expires = store.FromUnixNano(x.acq), store.FromUnixNano(x.ren), store.FromUnixNano(x.exp)
	return x.l
}

// CheckLease is what [store.Leases]' AcquireLease requires of req, checked
// before the engine writes.
func CheckLease(req store.LeaseRequest) error {
	if req.Name == "" || req.Holder == "" || req.TTL <= 0 {
		return errors.New("acquire lease: name, holder and a positive ttl are required")
	}
	return nil
}

// AcquireLease is [store.Leases]' AcquireLease inside t at now: the lease
// taken, or (held) the live lease of another holder.
func AcquireLease(t Tx, req store.LeaseRequest, now time.Time) (l store.Lease, held bool, err error) {
	var x leaseRow
	err = t.Scan(qAcquire, []any{req.Name, req.Holder, req.Info, now.UnixNano(), now.UnixNano(), now.Add(req.TTL).UnixNano()}, x.dest()...)
	if errors.Is(err, ErrNoRows) {
		held = true
		err = t.Scan(`SELECT `+leaseCols+` FROM leases WHERE name = ?`, []any{req.Name}, x.dest()...)
	}
	if err != nil {
		return store.Lease{}, false, err
	}
	return x.lease(), held, nil
}

// LeaseHeld is the error of an AcquireLease that found l held.
func LeaseHeld(l store.Lease) error {
	return fmt.Errorf("lease %s: %w (%s, until %s)", l.Name, store.ErrLeaseHeld, l.Holder, l.Expires.Format("15:04:05.000"))
}

// ReleaseLease is [store.Leases]' ReleaseLease inside t at now.
func ReleaseLease(t Tx, name, holder string, now time.Time) error {
	_, err := t.Exec(`UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ? AND expires_at > ?`, now.UnixNano(), name, holder, now.UnixNano())
	return err
}

// ListLeases is [store.Leases]' ListLeases: those whose name starts with
// prefix, by name.
func ListLeases(r Reader, prefix string) ([]store.Lease, error) {
	// substr counts characters in both engines.
	rows, err := r.Query(`SELECT `+leaseCols+` FROM leases WHERE substr(name, 1, ?) = ? ORDER BY name`, utf8.RuneCountInString(prefix), prefix)
	out, err := collect(rows, err, func(rows Rows) (store.Lease, error) {
		var x leaseRow
		err := rows.Scan(x.dest()...)
		return x.lease(), err
	})
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}
