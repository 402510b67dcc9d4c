package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// The methods of Store on pairing, tool results, the audit trail,
// schedules and the usage ledger.

// RequestPairing implements [store.Pairing].
func (s Store) RequestPairing(ctx context.Context, req store.PairingRequest) (store.PairingResponse, error) {
	if req.Instance == "" || req.SenderID == "" {
		return store.PairingResponse{}, errors.New("request pairing: instance and sender id are required")
	}
	if req.TTL <= 0 {
		req.TTL = time.Hour
	}
	var resp store.PairingResponse
	err := s.e.Write(ctx, Write{Durable: true, Serialized: true}, func(t Tx) (err error) {
		resp, err = RequestPairing(t, req, s.e.Now(), s.e.MaxPendingPairings)
		return err
	})
	if err != nil {
		return store.PairingResponse{}, fmt.Errorf("request pairing for %s:%s: %w", req.Instance, req.SenderID, err)
	}
	return resp, nil
}

// ApprovePairing implements [store.Pairing].
func (s Store) ApprovePairing(ctx context.Context, req store.ApproveRequest) (store.ApprovedSender, error) {
	code := strings.ToUpper(strings.TrimSpace(req.Code))
	var a Approval
	err := s.e.Write(ctx, Write{Durable: true, Serialized: true}, func(t Tx) (err error) {
		a, err = ApprovePairing(t, code, req.By, s.e.Now())
		return err
	})
	return a.Result(err)
}

// PendingPairings implements [store.Pairing].
func (s Store) PendingPairings(ctx context.Context, instance string) ([]store.PairingCode, error) {
	out, err := PendingPairings(s.read(ctx), instance, s.e.Now())
	if err != nil {
		return nil, fmt.Errorf("list pending pairings: %w", err)
	}
	return out, nil
}

// IsApproved implements [store.Pairing].
func (s Store) IsApproved(ctx context.Context, instance, senderID string, ttl time.Duration) (bool, error) {
	var since int64
	if ttl > 0 {
		since = s.e.Now().Add(-ttl).UnixNano()
	}
	ok, err := IsApproved(s.read(ctx), instance, senderID, since)
	if err != nil {
		return false, fmt.Errorf("is %s:%s approved: %w", instance, senderID, err)
	}
	return ok, nil
}

// ApprovedSenders implements [store.Pairing].
func (s Store) ApprovedSenders(ctx context.Context, instance string) ([]store.ApprovedSender, error) {
	out, err := ApprovedSenders(s.read(ctx), instance)
	if err != nil {
		return nil, fmt.Errorf("list approved senders: %w", err)
	}
	return out, nil
}

// RevokeApproval implements [store.Pairing].
func (s Store) RevokeApproval(ctx context.Context, instance, senderID string) (bool, error) {
	var found bool
	err := s.e.Write(ctx, Write{Durable: true, Serialized: true}, func(t Tx) (err error) {
		found, err = RevokeApproval(t, instance, senderID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("revoke %s:%s: %w", instance, senderID, err)
	}
	return found, nil
}

// RecordToolResult implements [store.ToolResults]: the first result of a
// key stays.
func (s Store) RecordToolResult(ctx context.Context, r store.ToolResult) error {
	if err := CheckToolResult(r); err != nil {
		return err
	}
	if r.At.IsZero() {
		r.At = s.e.Now()
	}
	if err := s.e.Write(ctx, plain, func(t Tx) error { return RecordToolResult(t, r) }); err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	return nil
}

// ToolResult implements [store.ToolResults].
func (s Store) ToolResult(ctx context.Context, key string) (store.ToolResult, error) {
	r, err := ToolResult(s.read(ctx), key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.ToolResult{}, fmt.Errorf("tool result: %w", err)
	}
	return r, err
}

// Audit implements [store.AuditTrail].
func (s Store) Audit(ctx context.Context, e store.AuditEvent) error {
	if e.At.IsZero() {
		e.At = s.e.Now()
	}
	if err := s.e.Write(ctx, plain, func(t Tx) error { return Audit(t, e) }); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// ListAudit implements [store.AuditTrail].
func (s Store) ListAudit(ctx context.Context, f store.AuditFilter, limit int) ([]store.AuditEvent, error) {
	out, err := ListAudit(s.adhoc(ctx), f, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// PruneAudit implements [store.AuditTrail].
func (s Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.e.Write(ctx, plain, func(t Tx) (err error) {
		n, err = PruneAudit(t, before)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}

// AddSchedule implements [store.Schedules].
func (s Store) AddSchedule(ctx context.Context, sc store.Schedule) (store.Schedule, error) {
	if sc.Name == "" {
		return store.Schedule{}, errors.New("add schedule: a name is required")
	}
	sc.Added = s.e.Now()
	if err := s.e.Write(ctx, durable, func(t Tx) error { return AddSchedule(t, sc) }); err != nil {
		return store.Schedule{}, fmt.Errorf("add schedule %s: %w", sc.Name, err)
	}
	return sc, nil
}

// RemoveSchedules implements [store.Schedules].
func (s Store) RemoveSchedules(ctx context.Context, names ...string) (int, error) {
	if len(names) == 0 {
		return 0, nil
	}
	var removed int
	err := s.e.Write(ctx, durable, func(t Tx) (err error) {
		removed, err = RemoveSchedules(t, names)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("remove schedules: %w", err)
	}
	return removed, nil
}

// ListSchedules implements [store.Schedules].
func (s Store) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	out, err := ListSchedules(s.read(ctx))
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return out, nil
}

// RecordScheduleRun implements [store.Schedules].
func (s Store) RecordScheduleRun(ctx context.Context, job string, at time.Time) error {
	if job == "" {
		return errors.New("record schedule run: a job is required")
	}
	if err := s.e.Write(ctx, plain, func(t Tx) error { return RecordScheduleRun(t, job, at) }); err != nil {
		return fmt.Errorf("record the run of schedule %s: %w", job, err)
	}
	return nil
}

// ScheduleRuns implements [store.Schedules].
func (s Store) ScheduleRuns(ctx context.Context) (map[string]time.Time, error) {
	out, err := ScheduleRuns(s.read(ctx))
	if err != nil {
		return nil, fmt.Errorf("read schedule runs: %w", err)
	}
	return out, nil
}

// ListUsage implements [store.Ledger].
func (s Store) ListUsage(ctx context.Context, f store.UsageFilter, limit int) ([]store.TurnUsage, error) {
	out, err := ListUsage(s.adhoc(ctx), f, limit)
	if err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	return out, nil
}

// SumUsage implements [store.Ledger]. The casts are PostgreSQL's: its sum
// of a bigint is a numeric.
func (s Store) SumUsage(ctx context.Context, f store.UsageFilter) (store.UsageSum, error) {
	where, args := UsageWhere(f)
	var u store.UsageSum
	err := s.adhoc(ctx).Scan(`SELECT count(*), CAST(coalesce(sum(input_tokens), 0) AS bigint), CAST(coalesce(sum(output_tokens), 0) AS bigint),
		CAST(coalesce(sum(cache_read_tokens), 0) AS bigint), CAST(coalesce(sum(cache_creation_tokens), 0) AS bigint), coalesce(sum(cost_usd), 0),
		count(*) FILTER (WHERE estimate), coalesce(sum(cost_usd) FILTER (WHERE estimate), 0), coalesce(max(cost_usd), 0) FROM usage`+where, args,
		&u.Turns, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheCreationTokens, &u.CostUSD, &u.Estimates, &u.EstimatedUSD, &u.MaxUSD)
	if err != nil {
		return u, fmt.Errorf("sum usage: %w", err)
	}
	return u, nil
}
