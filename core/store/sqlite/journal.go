package sqlite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// journal is the shared row layer's journal on this schema: the message
// is in journal_messages (migration 7), its row id the entry's, and an
// open entry's finished_at is 0 (the partial indexes' condition).
var journal = tables.NewJournal(`(SELECT message FROM journal_messages m WHERE m.id = journal.id)`, "finished_at = 0 AND ")

var entryCols = journal.Cols

const (
	qDedupeGet = `SELECT journal_id FROM dedupe WHERE key = ?`
	// qDedupePut stores a new key or replaces an expired one (seen_at at or
	// before the 4th argument, now - TTL); for a live key it changes no row.
	qDedupePut = `INSERT INTO dedupe(key, journal_id, seen_at) VALUES (?1, ?2, ?3)
		ON CONFLICT(key) DO UPDATE SET journal_id = excluded.journal_id, seen_at = excluded.seen_at
		WHERE dedupe.seen_at <= ?4`
	qJournalInsert = `INSERT INTO journal(id, instance, chat_id, thread_id, message_id, dedupe_key, received_at, state, updated_at, owner)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'accepted', ?, ?)`
	qMessageInsert = `INSERT INTO journal_messages(id, message) VALUES (?, ?)`
)

// Accept implements [store.Journal]: AcceptEarly, then its fsync.
func (d *DB) Accept(ctx context.Context, in store.Inbound) (store.AcceptResult, error) {
	res, synced, err := d.AcceptEarly(ctx, in)
	if err != nil {
		return store.AcceptResult{}, err
	}
	if err := synced(); err != nil {
		return store.AcceptResult{}, fmt.Errorf("accept: %w", err)
	}
	return res, nil
}

// AcceptEarly implements [store.EarlyAcceptor]: it returns at the commit
// (in the WAL, which survives kill -9), while the fsync that makes it
// survive a power loss runs; synced waits for that fsync.
func (d *DB) AcceptEarly(ctx context.Context, in store.Inbound) (res store.AcceptResult, synced func() error, err error) {
	if in.Instance == "" || in.ChatID == "" {
		return store.AcceptResult{}, nil, errors.New("accept: instance and chat id are required")
	}
	key := in.Key()
	ttl := d.opts.DedupeTTL.Nanoseconds()
	synced, err = d.w.early(ctx, func(t *wtx) error {
		now := d.now()
		id := t.nextID()
		if key != "" {
			// Store the key unless it is live: a live key updates nothing.
			n, err := t.execN(qDedupePut, key, id, now.UnixNano(), now.UnixNano()-ttl)
			if err != nil {
				return err
			}
			if n == 0 {
				t.ids-- // give the id back
				var first int64
				if err := t.scan(qDedupeGet, []any{key}, &first); err != nil {
					return err
				}
				res = store.AcceptResult{ID: first, Duplicate: true}
				return nil
			}
			t.dedupeDelta++
		}
		recv := in.ReceivedAt
		if recv.IsZero() {
			recv = now
		}
		if _, err := t.exec(qJournalInsert, id, in.Instance, in.ChatID, in.ThreadID, in.MessageID, key,
			recv.UnixNano(), now.UnixNano(), d.opts.Host); err != nil {
			return err
		}
		if in.Message != nil {
			if _, err := t.exec(qMessageInsert, id, in.Message); err != nil {
				return err
			}
		}
		res = store.AcceptResult{ID: id}
		return nil
	})
	if err != nil {
		return store.AcceptResult{}, nil, fmt.Errorf("accept: %w", err)
	}
	return res, synced, nil
}

// state reads the current state of an entry inside a write transaction.
func (t *wtx) state(id int64) (store.State, error) { return tables.State(tablesTx{t}, id, "") }

// Amend implements [store.Journal].
func (d *DB) Amend(ctx context.Context, id int64, message []byte) error {
	err := d.w.do(ctx, func(t *wtx) error {
		s, err := t.state(id)
		if err != nil {
			return err
		}
		if s != store.StateAccepted {
			return fmt.Errorf("entry %d: %w: %s → %s (amend)", id, store.ErrBadTransition, s, store.StateAccepted)
		}
		_, err = t.exec(`INSERT INTO journal_messages(id, message) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET message = excluded.message`, id, message)
		return err
	})
	if err != nil {
		return fmt.Errorf("amend %d: %w", id, err)
	}
	return nil
}

// qStart and qBegin move an entry to processing, qBegin to a session too.
const (
	qStart = `UPDATE journal SET state = 'processing', attempts = attempts + 1, launches = launches + 1, began = 0, updated_at = ?, owner = ?
		WHERE id = ? AND state IN ('accepted', 'queued')`
	qBegin = `UPDATE journal SET state = 'processing', session_key = ?, attempts = attempts + 1, launches = launches + 1, began = 0, updated_at = ?, owner = ?
		WHERE id = ? AND state IN ('accepted', 'queued')`
)

// start moves ids to processing (and to sessionKey unless empty), all or
// none: tables.Store's Start and Begin.
func (d *DB) start(ctx context.Context, sessionKey string, ids []int64) error {
	return d.w.do(ctx, func(t *wtx) error {
		now := d.now().UnixNano()
		for _, id := range ids {
			// A failed op is rolled back whole: no need to check all first.
			q, args := qStart, []any{now, d.opts.Host, id}
			if sessionKey != "" {
				q, args = qBegin, append([]any{sessionKey}, args...)
			}
			n, err := t.execN(q, args...)
			if err != nil {
				return err
			}
			if n == 0 {
				return t.refuse(id, store.StateProcessing)
			}
		}
		return nil
	})
}

// MarkBegan implements [store.Journal].
func (d *DB) MarkBegan(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := d.w.do(ctx, func(t *wtx) error {
		for _, id := range ids {
			if _, err := t.exec(`UPDATE journal SET began = 1 WHERE id = ? AND state = 'processing' AND owner = ?`, id, d.opts.Host); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark began %v: %w", ids, err)
	}
	return nil
}

// Park implements [store.Journal].
func (d *DB) Park(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := d.w.do(ctx, func(t *wtx) error {
		now := d.now().UnixNano()
		for _, id := range ids {
			n, err := t.execN(`UPDATE journal SET state = 'parked', attempts = max(attempts - 1, 0), updated_at = ?
				WHERE id = ? AND state = 'processing'`, now, id)
			if err != nil {
				return err
			}
			if n == 0 {
				return t.refuse(id, store.StateParked)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("park %v: %w", ids, err)
	}
	return nil
}

// Unpark implements [store.Journal].
func (d *DB) Unpark(ctx context.Context) ([]string, error) {
	var keys []string
	err := d.w.do(ctx, func(t *wtx) error {
		keys = nil
		rows, err := t.query(`UPDATE journal SET state = 'queued', updated_at = ? WHERE state = 'parked' AND finished_at = 0 RETURNING id, session_key`, d.now().UnixNano())
		if err != nil {
			return err
		}
		defer rows.Close()
		type parked struct {
			id  int64
			key string
		}
		var all []parked
		for rows.Next() {
			var p parked
			if err := rows.Scan(&p.id, &p.key); err != nil {
				return err
			}
			all = append(all, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		slices.SortFunc(all, func(a, b parked) int { return cmp.Compare(a.id, b.id) })
		for _, p := range all {
			if !slices.Contains(keys, p.key) {
				keys = append(keys, p.key)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unpark: %w", err)
	}
	return keys, nil
}

// Finish implements [store.Journal].
func (d *DB) Finish(ctx context.Context, req store.FinishRequest) error {
	if !req.State.Terminal() {
		return fmt.Errorf("finish: %q is not a terminal state", req.State)
	}
	if len(req.IDs) == 0 {
		return nil
	}
	err := d.w.do(ctx, func(t *wtx) error {
		if req.From != "" {
			now := d.now().UnixNano()
			for _, id := range req.IDs {
				if _, err := t.exec(`UPDATE journal SET state = ?, reason = ?, updated_at = ?, finished_at = ? WHERE id = ? AND state = ?`,
					string(req.State), req.Reason, now, now, id, string(req.From)); err != nil {
					return err
				}
			}
			return nil
		}
		return t.finish(req.IDs, req.State, req.Reason, d.now())
	})
	if err != nil {
		return fmt.Errorf("finish %v as %s: %w", req.IDs, req.State, err)
	}
	return nil
}

// finish applies a terminal transition to all ids; an id already in that
// state is left alone.
func (t *wtx) finish(ids []int64, to store.State, reason string, now time.Time) error {
	for _, id := range ids {
		n, err := t.execN(`UPDATE journal SET state = ?1, reason = ?2, updated_at = ?3, finished_at = ?3
			WHERE id = ?4 AND finished_at = 0`, string(to), reason, now.UnixNano(), id)
		if err != nil {
			return err
		}
		if n == 0 {
			if s, err := t.state(id); err != nil || s != to {
				return t.refuse(id, to)
			}
		}
	}
	return nil
}

// refuse explains why entry id could not move to state to: ErrNotFound or
// ErrBadTransition.
func (t *wtx) refuse(id int64, to store.State) error { return tables.Refuse(tablesTx{t}, id, to) }

// qUnfinished walks the small partial index of open entries, not the
// whole journal.
var qUnfinished = `SELECT ` + entryCols + ` FROM journal INDEXED BY journal_live
	WHERE finished_at = 0 AND id > ? ORDER BY id LIMIT ?`

// qOrphans are the open entries no other live host owns (see
// store.Journal.Recover): ?1 this host, ?2 the host lease prefix, ?3 now.
var qOrphans = `SELECT ` + entryCols + ` FROM journal INDEXED BY journal_live
	WHERE finished_at = 0 AND (owner = '' OR owner = ?1 OR NOT EXISTS
		(SELECT 1 FROM leases WHERE name = ?2 || journal.owner AND expires_at > ?3))
	ORDER BY id`

// qAdopt is qOrphans without this host's and ownerless entries.
var qAdopt = `SELECT ` + entryCols + ` FROM journal INDEXED BY journal_live
	WHERE finished_at = 0 AND owner <> '' AND owner <> ?1 AND NOT EXISTS
		(SELECT 1 FROM leases WHERE name = ?2 || journal.owner AND expires_at > ?3)
	ORDER BY id`

// ListUnfinished implements [store.Journal].
func (d *DB) ListUnfinished(ctx context.Context, afterID int64, limit int) ([]store.Entry, error) {
	if limit <= 0 {
		limit = -1
	}
	es, err := tables.Entries(d.reader(ctx).Query(qUnfinished, afterID, limit))
	if err != nil {
		return nil, fmt.Errorf("list unfinished: %w", err)
	}
	return es, nil
}

// Recover implements [store.Journal].
func (d *DB) Recover(ctx context.Context, opts store.RecoverOptions) (store.Recovery, error) {
	var rec store.Recovery
	err := d.w.durable(ctx, func(t *wtx) error {
		now := d.now()
		q := qOrphans
		if opts.Adopt {
			q = qAdopt
		}
		open, err := tables.Entries(tablesTx{t}.Query(q, d.opts.Host, store.HostLeasePrefix, now.UnixNano()))
		if err != nil {
			return err
		}
		for i, e := range open {
			if e.Owner != d.opts.Host {
				open[i].Owner = d.opts.Host
				if _, err := t.exec(`UPDATE journal SET owner = ? WHERE id = ?`, d.opts.Host, e.ID); err != nil {
					return err
				}
			}
		}
		rec, err = store.ApplyRecovery(open, opts, now, store.RecoveryWrites{
			Requeue: func(e store.Entry) error { return tables.Requeue(tablesTx{t}, e, now.UnixNano()) },
			Fail:    func(id int64, reason string) error { return t.finish([]int64{id}, store.StateFailed, reason, now) },
			Reply:   t.pendingReply,
		})
		return err
	})
	if err != nil {
		return store.Recovery{}, fmt.Errorf("recover journal: %w", err)
	}
	return rec, nil
}

// pruneBatch bounds the rows one Prune transaction deletes, so Accepts are
// not held up behind a huge delete.
const pruneBatch = 5000

// Prune implements [store.Journal].
func (d *DB) Prune(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		var n int64
		err := d.w.do(ctx, func(t *wtx) error {
			rows, err := t.query(`SELECT id FROM journal WHERE finished_at > 0 AND finished_at < ? LIMIT ?`,
				before.UnixNano(), pruneBatch)
			if err != nil {
				return err
			}
			var ids []any
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			n = int64(len(ids))
			for _, id := range ids {
				for _, q := range []string{
					`DELETE FROM reply_chunks WHERE journal_id = ?`,
					`DELETE FROM chunk_texts WHERE journal_id = ?`,
					`DELETE FROM live_output WHERE journal_id = ?`,
					`DELETE FROM tool_results WHERE journal_id = ?`,
					`DELETE FROM replies WHERE journal_id = ?`,
					`DELETE FROM journal_messages WHERE id = ?`,
					`DELETE FROM journal WHERE id = ?`,
				} {
					if _, err := t.exec(q, id); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("prune journal: %w", err)
		}
		total += int(n)
		if n < pruneBatch {
			return total, nil
		}
	}
}
