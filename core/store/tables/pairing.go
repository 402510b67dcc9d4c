package tables

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// RequestPairing is [store.Pairing]'s RequestPairing inside t at now, with
// req validated and its TTL defaulted by the caller: the sender's live code
// again, or a new one unless the instance already has maxPending.
func RequestPairing(t Tx, req store.PairingRequest, now time.Time, maxPending int) (store.PairingResponse, error) {
	if _, err := t.Exec(`DELETE FROM pairing_codes WHERE expires_at <= ?`, now.UnixNano()); err != nil {
		return store.PairingResponse{}, err
	}
	var c store.PairingCode
	var created, expires int64
	err := t.Scan(`SELECT code, sender_name, sender_username, created_at, expires_at FROM pairing_codes WHERE instance = ? AND sender_id = ?`,
		[]any{req.Instance, req.SenderID}, &c.Code, &c.SenderName, &c.SenderUsername, &created, &expires)
	if err == nil {
		c.Instance, c.SenderID, c.CreatedAt, c.ExpiresAt = req.Instance, req.SenderID, store.FromUnixNano(created), store.FromUnixNano(expires)
		return store.PairingResponse{Code: c}, nil
	}
	if !errors.Is(err, ErrNoRows) {
		return store.PairingResponse{}, err
	}
	var n int
	if err := t.Scan(`SELECT count(*) FROM pairing_codes WHERE instance = ?`, []any{req.Instance}, &n); err != nil {
		return store.PairingResponse{}, err
	}
	if n >= maxPending {
		return store.PairingResponse{}, store.ErrTooManyPending
	}
	c = store.PairingCode{Instance: req.Instance, SenderID: req.SenderID, SenderName: req.SenderName, SenderUsername: req.SenderUsername, CreatedAt: now, ExpiresAt: now.Add(req.TTL)}
	for range 10 {
		c.Code = strings.ToUpper(strings.TrimSpace(req.Code))
		if c.Code == "" {
			c.Code = store.NewPairingCode()
		}
		var x int
		err := t.Scan(`SELECT 1 FROM pairing_codes WHERE code = ?`, []any{c.Code}, &x)
		if errors.Is(err, ErrNoRows) {
			break
		}
		if err != nil {
			return store.PairingResponse{}, err
		}
		if req.Code != "" {
			return store.PairingResponse{}, fmt.Errorf("code %s is already in use", c.Code)
		}
	}
	if _, err := t.Exec(`INSERT INTO pairing_codes(instance, sender_id, code, created_at, expires_at, sender_name, sender_username) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.Instance, c.SenderID, c.Code, now.UnixNano(), c.ExpiresAt.UnixNano(), c.SenderName, c.SenderUsername); err != nil {
		return store.PairingResponse{}, err
	}
	return store.PairingResponse{Code: c, Created: true}, nil
}

// Approval is what ApprovePairing did: the sender approved, or why not
// (the code had expired, or no code matched: a wrong guess, counted). Both
// of the latter are committed (the expired code deleted, the guess
// recorded) and reported after the commit.
type Approval struct {
	Sender         store.ApprovedSender
	Expired, Wrong bool
}

// ApprovePairing is [store.Pairing]'s ApprovePairing inside t at now, code
// normalized by the caller.
func ApprovePairing(t Tx, code, by string, now time.Time) (Approval, error) {
	var a Approval
	if _, err := t.Exec(`DELETE FROM pairing_guesses WHERE at <= ?`, now.Add(-store.PairingGuessWindow).UnixNano()); err != nil {
		return a, err
	}
	var guesses int
	if err := t.Scan(`SELECT count(*) FROM pairing_guesses`, nil, &guesses); err != nil {
		return a, err
	}
	if guesses >= store.MaxWrongPairingGuesses {
		return a, store.ErrTooManyAttempts
	}
	var expires int64
	err := t.Scan(`SELECT instance, sender_id, expires_at FROM pairing_codes WHERE code = ?`, []any{code}, &a.Sender.Instance, &a.Sender.SenderID, &expires)
	if errors.Is(err, ErrNoRows) {
		// Commit the guess (and, at the bound, void every pending code);
		// report after.
		a.Wrong = true
		if _, err := t.Exec(`INSERT INTO pairing_guesses(at) VALUES (?)`, now.UnixNano()); err != nil {
			return a, err
		}
		if guesses+1 >= store.MaxWrongPairingGuesses {
			_, err := t.Exec(`DELETE FROM pairing_codes`)
			return a, err
		}
		return a, nil
	}
	if err != nil {
		return a, err
	}
	if _, err := t.Exec(`DELETE FROM pairing_codes WHERE code = ?`, code); err != nil {
		return a, err
	}
	if expires <= now.UnixNano() {
		// Commit the deletion of the expired code; report after.
		a.Expired = true
		return a, nil
	}
	a.Sender.ApprovedAt, a.Sender.ApprovedBy = now, by
	_, err = t.Exec(`INSERT INTO approved_senders(instance, sender_id, approved_at, approved_by) VALUES (?, ?, ?, ?)
		ON CONFLICT(instance, sender_id) DO UPDATE SET approved_at = excluded.approved_at, approved_by = excluded.approved_by`,
		a.Sender.Instance, a.Sender.SenderID, now.UnixNano(), by)
	return a, err
}

// PendingPairings is [store.Pairing]'s PendingPairings at now.
func PendingPairings(r Reader, instance string, now time.Time) ([]store.PairingCode, error) {
	rows, err := r.Query(`SELECT instance, sender_id, sender_name, sender_username, code, created_at, expires_at FROM pairing_codes
		WHERE (? = '' OR instance = ?) AND expires_at > ? ORDER BY created_at, instance, sender_id`,
		instance, instance, now.UnixNano())
	return collect(rows, err, func(rows Rows) (store.PairingCode, error) {
		var c store.PairingCode
		var created, expires int64
		err := rows.Scan(&c.Instance, &c.SenderID, &c.SenderName, &c.SenderUsername, &c.Code, &created, &expires)
		c.CreatedAt, c.ExpiresAt = store.FromUnixNano(created), store.FromUnixNano(expires)
		return c, err
	})
}

// IsApproved is [store.Pairing]'s IsApproved: approved after since (unix
// nanoseconds; 0 for ever).
func IsApproved(r Reader, instance, senderID string, since int64) (bool, error) {
	var x int
	err := r.Scan(`SELECT 1 FROM approved_senders WHERE instance = ? AND sender_id = ? AND approved_at > ?`, []any{instance, senderID, since}, &x)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// ApprovedSenders is [store.Pairing]'s ApprovedSenders.
func ApprovedSenders(r Reader, instance string) ([]store.ApprovedSender, error) {
	rows, err := r.Query(`SELECT instance, sender_id, approved_at, approved_by FROM approved_senders
		WHERE (? = '' OR instance = ?) ORDER BY approved_at, instance, sender_id`, instance, instance)
	return collect(rows, err, func(rows Rows) (store.ApprovedSender, error) {
		var a store.ApprovedSender
		var at int64
		err := rows.Scan(&a.Instance, &a.SenderID, &at, &a.ApprovedBy)
		a.ApprovedAt = store.FromUnixNano(at)
		return a, err
	})
}

// RevokeApproval is [store.Pairing]'s RevokeApproval inside t: whether the
// sender was approved; their pending code goes too.
func RevokeApproval(t Tx, instance, senderID string) (bool, error) {
	n, err := t.Exec(`DELETE FROM approved_senders WHERE instance = ? AND sender_id = ?`, instance, senderID)
	if err != nil {
		return false, err
	}
	_, err = t.Exec(`DELETE FROM pairing_codes WHERE instance = ? AND sender_id = ?`, instance, senderID)
	return n > 0, err
}

// Result is what ApprovePairing's caller returns once the transaction
// ended with err: the approved sender, or store.ErrExpired or
// store.ErrNotFound for what was committed instead.
func (a Approval) Result(err error) (store.ApprovedSender, error) {
	switch {
	case err == nil && a.Expired:
		err = store.ErrExpired
	case err == nil && a.Wrong:
		err = store.ErrNotFound
	}
	if err != nil {
		return store.ApprovedSender{}, fmt.Errorf("approve pairing code: %w", err)
	}
	return a.Sender, nil
}
