package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// pairingLock serializes the pairing writes of every host (they are rare:
// counting an instance's codes and the wrong guesses needs a stable view).
const pairingLock = 0x70616972 // "pair"

func lockPairing(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pairingLock)
	return err
}

// RequestPairing implements [store.Pairing].
func (d *DB) RequestPairing(ctx context.Context, req store.PairingRequest) (store.PairingResponse, error) {
	if req.Instance == "" || req.SenderID == "" {
		return store.PairingResponse{}, errors.New("request pairing: instance and sender id are required")
	}
	if req.TTL <= 0 {
		req.TTL = time.Hour
	}
	var resp store.PairingResponse
	err := d.write(ctx, func(tx pgx.Tx) (err error) {
		if err := lockPairing(ctx, tx); err != nil {
			return err
		}
		resp, err = tables.RequestPairing(tablesTx{ctx, tx}, req, d.now(), d.opts.MaxPendingPairings)
		return err
	})
	if err != nil {
		return store.PairingResponse{}, fmt.Errorf("request pairing for %s:%s: %w", req.Instance, req.SenderID, err)
	}
	return resp, nil
}

// ApprovePairing implements [store.Pairing].
func (d *DB) ApprovePairing(ctx context.Context, req store.ApproveRequest) (store.ApprovedSender, error) {
	code := strings.ToUpper(strings.TrimSpace(req.Code))
	var a tables.Approval
	err := d.write(ctx, func(tx pgx.Tx) (err error) {
		if err := lockPairing(ctx, tx); err != nil {
			return err
		}
		a, err = tables.ApprovePairing(tablesTx{ctx, tx}, code, req.By, d.now())
		return err
	})
	return a.Result(err)
}

// PendingPairings implements [store.Pairing].
func (d *DB) PendingPairings(ctx context.Context, instance string) ([]store.PairingCode, error) {
	out, err := tables.PendingPairings(d.reader(ctx), instance, d.now())
	if err != nil {
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
	ok, err := tables.IsApproved(d.reader(ctx), instance, senderID, since)
	if err != nil {
		return false, fmt.Errorf("is %s:%s approved: %w", instance, senderID, err)
	}
	return ok, nil
}

// ApprovedSenders implements [store.Pairing].
func (d *DB) ApprovedSenders(ctx context.Context, instance string) ([]store.ApprovedSender, error) {
	out, err := tables.ApprovedSenders(d.reader(ctx), instance)
	if err != nil {
		return nil, fmt.Errorf("list approved senders: %w", err)
	}
	return out, nil
}

// RevokeApproval implements [store.Pairing].
func (d *DB) RevokeApproval(ctx context.Context, instance, senderID string) (bool, error) {
	var found bool
	err := d.write(ctx, func(tx pgx.Tx) (err error) {
		if err := lockPairing(ctx, tx); err != nil {
			return err
		}
		found, err = tables.RevokeApproval(tablesTx{ctx, tx}, instance, senderID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("revoke %s:%s: %w", instance, senderID, err)
	}
	return found, nil
}
