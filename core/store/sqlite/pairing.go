package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// RequestPairing implements [store.Pairing].
func (d *DB) RequestPairing(ctx context.Context, req store.PairingRequest) (store.PairingResponse, error) {
	if req.Instance == "" || req.SenderID == "" {
		return store.PairingResponse{}, errors.New("request pairing: instance and sender id are required")
	}
	if req.TTL <= 0 {
		req.TTL = time.Hour
	}
	var resp store.PairingResponse
	err := d.w.durable(ctx, func(t *wtx) error {
		now := d.now()
		if _, err := t.exec(`DELETE FROM pairing_codes WHERE expires_at <= ?`, now.UnixNano()); err != nil {
			return err
		}
		var c store.PairingCode
		var created, expires int64
		err := t.scan(`SELECT code, sender_name, sender_username, created_at, expires_at FROM pairing_codes WHERE instance = ? AND sender_id = ?`,
			[]any{req.Instance, req.SenderID}, &c.Code, &c.SenderName, &c.SenderUsername, &created, &expires)
		if err == nil {
			c.Instance, c.SenderID, c.CreatedAt, c.ExpiresAt = req.Instance, req.SenderID, store.FromUnixNano(created), store.FromUnixNano(expires)
			resp = store.PairingResponse{Code: c}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var n int
		if err := t.scan(`SELECT count(*) FROM pairing_codes WHERE instance = ?`, []any{req.Instance}, &n); err != nil {
			return err
		}
		if n >= d.opts.MaxPendingPairings {
			return store.ErrTooManyPending
		}
		c = store.PairingCode{Instance: req.Instance, SenderID: req.SenderID, SenderName: req.SenderName, SenderUsername: req.SenderUsername, CreatedAt: now, ExpiresAt: now.Add(req.TTL)}
		for range 10 {
			c.Code = strings.ToUpper(strings.TrimSpace(req.Code))
			if c.Code == "" {
				c.Code = store.NewPairingCode()
			}
			var x int
			err := t.scan(`SELECT 1 FROM pairing_codes WHERE code = ?`, []any{c.Code}, &x)
			if errors.Is(err, sql.ErrNoRows) {
				break
			}
			if err != nil {
				return err
			}
			if req.Code != "" {
				return fmt.Errorf("code %s is already in use", c.Code)
			}
		}
		if _, err := t.exec(`INSERT INTO pairing_codes(instance, sender_id, code, created_at, expires_at, sender_name, sender_username) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			c.Instance, c.SenderID, c.Code, now.UnixNano(), c.ExpiresAt.UnixNano(), c.SenderName, c.SenderUsername); err != nil {
			return err
		}
		resp = store.PairingResponse{Code: c, Created: true}
		return nil
	})
	if err != nil {
		return store.PairingResponse{}, fmt.Errorf("request pairing for %s:%s: %w", req.Instance, req.SenderID, err)
	}
	return resp, nil
}

// ApprovePairing implements [store.Pairing].
func (d *DB) ApprovePairing(ctx context.Context, req store.ApproveRequest) (store.ApprovedSender, error) {
	code := strings.ToUpper(strings.TrimSpace(req.Code))
	var a store.ApprovedSender
	var expired, wrong bool
	err := d.w.durable(ctx, func(t *wtx) error {
		now := d.now()
		expired, wrong = false, false
		since := now.Add(-store.PairingGuessWindow).UnixNano()
		if _, err := t.exec(`DELETE FROM pairing_guesses WHERE at <= ?`, since); err != nil {
			return err
		}
		var guesses int
		if err := t.scan(`SELECT count(*) FROM pairing_guesses`, nil, &guesses); err != nil {
			return err
		}
		if guesses >= store.MaxWrongPairingGuesses {
			return store.ErrTooManyAttempts
		}
		var expires int64
		err := t.scan(`SELECT instance, sender_id, expires_at FROM pairing_codes WHERE code = ?`, []any{code}, &a.Instance, &a.SenderID, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			// Commit the guess (and, at the bound, void every pending
			// code); report after.
			wrong = true
			if _, err := t.exec(`INSERT INTO pairing_guesses(at) VALUES (?)`, now.UnixNano()); err != nil {
				return err
			}
			if guesses+1 >= store.MaxWrongPairingGuesses {
				_, err := t.exec(`DELETE FROM pairing_codes`)
				return err
			}
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := t.exec(`DELETE FROM pairing_codes WHERE code = ?`, code); err != nil {
			return err
		}
		if expires <= now.UnixNano() {
			// Commit the deletion of the expired code; report after.
			expired = true
			return nil
		}
		a.ApprovedAt, a.ApprovedBy = now, req.By
		_, err = t.exec(`INSERT INTO approved_senders(instance, sender_id, approved_at, approved_by) VALUES (?, ?, ?, ?)
			ON CONFLICT(instance, sender_id) DO UPDATE SET approved_at = excluded.approved_at, approved_by = excluded.approved_by`,
			a.Instance, a.SenderID, now.UnixNano(), req.By)
		return err
	})
	switch {
	case err == nil && expired:
		err = store.ErrExpired
	case err == nil && wrong:
		err = store.ErrNotFound
	}
	if err != nil {
		return store.ApprovedSender{}, fmt.Errorf("approve pairing code: %w", err)
	}
	return a, nil
}

// PendingPairings implements [store.Pairing].
func (d *DB) PendingPairings(ctx context.Context, instance string) ([]store.PairingCode, error) {
	rows, err := d.query(ctx, `SELECT instance, sender_id, sender_name, sender_username, code, created_at, expires_at FROM pairing_codes
		WHERE (? = '' OR instance = ?) AND expires_at > ? ORDER BY created_at, instance, sender_id`,
		instance, instance, d.now().UnixNano())
	if err != nil {
		return nil, fmt.Errorf("list pending pairings: %w", err)
	}
	defer rows.Close()
	var out []store.PairingCode
	for rows.Next() {
		var c store.PairingCode
		var created, expires int64
		if err := rows.Scan(&c.Instance, &c.SenderID, &c.SenderName, &c.SenderUsername, &c.Code, &created, &expires); err != nil {
			return nil, fmt.Errorf("list pending pairings: %w", err)
		}
		c.CreatedAt, c.ExpiresAt = store.FromUnixNano(created), store.FromUnixNano(expires)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list pending pairings: %w", err)
	}
	return out, nil
}

// IsApproved implements [store.Pairing].
func (d *DB) IsApproved(ctx context.Context, instance, senderID string, ttl time.Duration) (bool, error) {
	var since int64
	if ttl > 0 {
		since = d.now().Add(-ttl).UnixNano()
	}
	row, err := d.queryRow(ctx, `SELECT 1 FROM approved_senders WHERE instance = ? AND sender_id = ? AND approved_at > ?`, instance, senderID, since)
	var x int
	if err == nil {
		err = row.Scan(&x)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("is %s:%s approved: %w", instance, senderID, err)
	}
	return true, nil
}

// ApprovedSenders implements [store.Pairing].
func (d *DB) ApprovedSenders(ctx context.Context, instance string) ([]store.ApprovedSender, error) {
	rows, err := d.query(ctx, `SELECT instance, sender_id, approved_at, approved_by FROM approved_senders
		WHERE (? = '' OR instance = ?) ORDER BY approved_at, instance, sender_id`, instance, instance)
	if err != nil {
		return nil, fmt.Errorf("list approved senders: %w", err)
	}
	defer rows.Close()
	var out []store.ApprovedSender
	for rows.Next() {
		var a store.ApprovedSender
		var at int64
		if err := rows.Scan(&a.Instance, &a.SenderID, &at, &a.ApprovedBy); err != nil {
			return nil, fmt.Errorf("list approved senders: %w", err)
		}
		a.ApprovedAt = store.FromUnixNano(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list approved senders: %w", err)
	}
	return out, nil
}

// RevokeApproval implements [store.Pairing].
func (d *DB) RevokeApproval(ctx context.Context, instance, senderID string) (bool, error) {
	var found bool
	err := d.w.durable(ctx, func(t *wtx) error {
		res, err := t.exec(`DELETE FROM approved_senders WHERE instance = ? AND sender_id = ?`, instance, senderID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		found = n > 0
		_, err = t.exec(`DELETE FROM pairing_codes WHERE instance = ? AND sender_id = ?`, instance, senderID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("revoke %s:%s: %w", instance, senderID, err)
	}
	return found, nil
}
