package tables

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/clawhost/clawhost/core/store"
)

// The methods of Store on the journal, the outbox, sessions, leases and
// the chat history.

// Entry implements [store.Journal].
func (s Store) Entry(ctx context.Context, id int64) (store.Entry, error) {
	return s.e.Journal.Entry(s.read(ctx), id)
}

// Enqueue implements [store.Journal].
func (s Store) Enqueue(ctx context.Context, id int64, sessionKey string) error {
	if sessionKey == "" {
		return fmt.Errorf("enqueue %d: empty session key", id)
	}
	err := s.e.Write(ctx, Write{Single: true}, func(t Tx) error {
		return Enqueue(t, id, sessionKey, s.e.Now().UnixNano(), s.e.Host)
	})
	if err != nil {
		return fmt.Errorf("enqueue %d: %w", id, err)
	}
	return nil
}

// Start implements [store.Journal].
func (s Store) Start(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.e.Start(ctx, "", ids); err != nil {
		return fmt.Errorf("start %v: %w", ids, err)
	}
	return nil
}

// Begin implements [store.Journal].
func (s Store) Begin(ctx context.Context, sessionKey string, ids ...int64) error {
	if sessionKey == "" {
		return fmt.Errorf("begin %v: empty session key", ids)
	}
	if len(ids) == 0 {
		return nil
	}
	if err := s.e.Start(ctx, sessionKey, ids); err != nil {
		return fmt.Errorf("begin %v: %w", ids, err)
	}
	return nil
}

// ListPending implements [store.Journal].
func (s Store) ListPending(ctx context.Context, sessionKey string, limit int) ([]store.Entry, error) {
	return s.e.Journal.ListPending(s.read(ctx), sessionKey, limit)
}

// CountPending implements [store.Journal].
func (s Store) CountPending(ctx context.Context, sessionKey string) (int, error) {
	return s.e.Journal.CountPending(s.read(ctx), sessionKey)
}

// PendingCounts implements [store.Journal].
func (s Store) PendingCounts(ctx context.Context) (map[string]int, error) {
	return s.e.Journal.PendingCounts(s.read(ctx))
}

// MarkAttempt implements [store.Outbox]: durable, for the send follows.
func (s Store) MarkAttempt(ctx context.Context, journalID int64, index int) error {
	err := s.e.Write(ctx, Write{Durable: true, Single: true}, func(t Tx) error {
		return MarkAttempt(t, journalID, index, s.e.Now().UnixNano())
	})
	if err != nil {
		return fmt.Errorf("mark chunk %d of %d attempted: %w", index, journalID, err)
	}
	return nil
}

// RecordLive implements [store.Outbox].
func (s Store) RecordLive(ctx context.Context, l store.Live) error {
	if err := s.e.Write(ctx, durable, func(t Tx) error { return RecordLive(t, l, s.e.ShareLock) }); err != nil {
		return fmt.Errorf("record live output %d of %d: %w", l.Seq, l.JournalID, err)
	}
	return nil
}

// LiveOutput implements [store.Outbox].
func (s Store) LiveOutput(ctx context.Context, journalID int64) ([]store.Live, error) {
	return LiveOutput(s.read(ctx), journalID)
}

// Session implements [store.Sessions].
func (s Store) Session(ctx context.Context, key string) (store.Session, error) {
	return s.e.Sessions.Session(s.read(ctx), key)
}

// RecentSessions implements [store.Sessions].
func (s Store) RecentSessions(ctx context.Context, limit int) ([]store.Session, error) {
	return s.e.Sessions.Recent(s.read(ctx), limit)
}

// CountSessions implements [store.Sessions].
func (s Store) CountSessions(ctx context.Context) (int, error) {
	return CountSessions(s.read(ctx))
}

// AcquireLease implements [store.Leases]: one statement.
func (s Store) AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	if err := CheckLease(req); err != nil {
		return store.Lease{}, err
	}
	var l store.Lease
	var held bool
	err := s.e.Write(ctx, Write{Single: true}, func(t Tx) (err error) {
		l, held, err = AcquireLease(t, req, s.e.Now())
		return err
	})
	if err != nil {
		return store.Lease{}, fmt.Errorf("acquire lease %s: %w", req.Name, err)
	}
	if held {
		return l, LeaseHeld(l)
	}
	return l, nil
}

// ReleaseLease implements [store.Leases].
func (s Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := s.e.Write(ctx, Write{Single: true}, func(t Tx) error { return ReleaseLease(t, name, holder, s.e.Now()) }); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// ListLeases implements [store.Leases].
func (s Store) ListLeases(ctx context.Context, prefix string) ([]store.Lease, error) {
	return ListLeases(s.read(ctx), prefix)
}

// ChatHistory implements [store.History]: one query, no index on the chat
// (/export is rare and the journal pruned, so a scan of it is cheaper than
// an index every Accept would pay for).
func (s Store) ChatHistory(ctx context.Context, f store.HistoryFilter, limit int) ([]store.HistoryEntry, error) {
	if f.Instance == "" || f.ChatID == "" {
		return nil, errors.New("chat history: instance and chat id are required")
	}
	q := `SELECT ` + s.e.Journal.Cols + `, (SELECT text FROM replies r WHERE r.journal_id = journal.id),
		(SELECT produced_at FROM replies r WHERE r.journal_id = journal.id),
		EXISTS (SELECT 1 FROM usage u WHERE u.at >= ? AND u.journal_id = journal.id)
		FROM journal WHERE instance = ? AND chat_id = ? AND received_at >= ?`
	since := store.UnixNano(f.Since)
	args := []any{since, f.Instance, f.ChatID, since}
	if f.ThreadID != "" {
		q += ` AND thread_id = ?`
		args = append(args, f.ThreadID)
	}
	q += ` ORDER BY id DESC`
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := s.read(ctx).Query(q, args...)
	out, err := collect(rows, err, func(rows Rows) (store.HistoryEntry, error) {
		var x entryRow
		var h store.HistoryEntry
		var text sql.NullString
		var produced sql.NullInt64
		if err := rows.Scan(append(x.dest(), &text, &produced, &h.Ran)...); err != nil {
			return h, err
		}
		h.Entry = x.entry()
		if text.Valid {
			h.Replied, h.Reply, h.RepliedAt = true, text.String, store.FromUnixNano(produced.Int64)
		}
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, err)
	}
	slices.Reverse(out)
	return out, nil
}
