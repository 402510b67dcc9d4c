package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// journal is the shared row layer's journal on this schema: the message
// is a column.
var journal = tables.NewJournal("message", "")

var entryCols = journal.Cols

const (
	// qAcceptKeyed stores the dedupe key unless it is live (seen after
	// $3 = now - TTL) and, only if it did, the entry: one statement, so
	// of concurrent Accepts with one key exactly one stores (the others
	// wait on the key's row and then find it live).
	qAcceptKeyed = `WITH k AS (
		INSERT INTO dedupe(key, journal_id, seen_at) VALUES ($1, nextval('journal_ids'), $2)
		ON CONFLICT (key) DO UPDATE SET journal_id = excluded.journal_id, seen_at = excluded.seen_at
		WHERE dedupe.seen_at <= $3
		RETURNING journal_id)
	INSERT INTO journal(id, instance, chat_id, thread_id, message_id, dedupe_key, received_at, message, state, updated_at, owner)
	SELECT journal_id, $4, $5, $6, $7, $1, $8, $9, 'accepted', $2, $10 FROM k RETURNING id`
	qAcceptPlain = `INSERT INTO journal(id, instance, chat_id, thread_id, message_id, dedupe_key, received_at, message, state, updated_at, owner)
	VALUES (nextval('journal_ids'), $1, $2, $3, $4, '', $5, $6, 'accepted', $7, $8) RETURNING id`
)

var qUnfinished = `SELECT ` + entryCols + ` FROM journal
		WHERE state NOT IN ('done', 'dropped', 'failed') AND id > $1 ORDER BY id`

// Accept implements [store.Journal].
func (d *DB) Accept(ctx context.Context, in store.Inbound) (store.AcceptResult, error) {
	if in.Instance == "" || in.ChatID == "" {
		return store.AcceptResult{}, errors.New("accept: instance and chat id are required")
	}
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return store.AcceptResult{}, fmt.Errorf("accept: %w", err)
	}
	defer cancel()
	now := d.now()
	recv := in.ReceivedAt
	if recv.IsZero() {
		recv = now
	}
	key := in.Key()
	var id int64
	if key == "" {
		err = d.pool.QueryRow(wctx, qAcceptPlain, in.Instance, in.ChatID, in.ThreadID, in.MessageID,
			recv.UnixNano(), in.Message, now.UnixNano(), d.opts.Host).Scan(&id)
	} else {
		err = d.pool.QueryRow(wctx, qAcceptKeyed, key, now.UnixNano(), now.UnixNano()-d.opts.DedupeTTL.Nanoseconds(),
			in.Instance, in.ChatID, in.ThreadID, in.MessageID, recv.UnixNano(), in.Message, d.opts.Host).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			var first int64
			if err := d.pool.QueryRow(wctx, `SELECT journal_id FROM dedupe WHERE key = $1`, key).Scan(&first); err != nil {
				return store.AcceptResult{}, fmt.Errorf("accept: %w", d.closed(err))
			}
			return store.AcceptResult{ID: first, Duplicate: true}, nil
		}
	}
	if err != nil {
		return store.AcceptResult{}, fmt.Errorf("accept: %w", d.closed(err))
	}
	return store.AcceptResult{ID: id}, nil
}

// refuse explains why entry id could not move to state to: ErrNotFound or
// ErrBadTransition.
func refuse(ctx context.Context, tx pgx.Tx, id int64, to store.State) error {
	return tables.Refuse(tablesTx{ctx, tx}, id, to)
}

// Amend implements [store.Journal].
func (d *DB) Amend(ctx context.Context, id int64, message []byte) error {
	err := d.single(ctx, func(t tables.Tx) error {
		n, err := t.Exec(`UPDATE journal SET message = ? WHERE id = ? AND state = 'accepted'`, message, id)
		if err != nil || n == 1 {
			return err
		}
		return tables.Refuse(t, id, store.StateAccepted)
	})
	if err != nil {
		return fmt.Errorf("amend %d: %w", id, err)
	}
	return nil
}

// start moves ids to processing (and to sessionKey unless empty), all or
// none: tables.Store's Start and Begin.
func (d *DB) start(ctx context.Context, sessionKey string, ids []int64) error {
	return d.write(ctx, func(tx pgx.Tx) error {
		moved, err := collectIDs(tx.Query(ctx, `UPDATE journal SET state = 'processing', attempts = attempts + 1, launches = launches + 1, began = false, updated_at = $1,
			session_key = CASE WHEN $2 = '' THEN session_key ELSE $2 END, owner = $4
			WHERE id = ANY($3) AND state IN ('accepted', 'queued') RETURNING id`, d.now().UnixNano(), sessionKey, ids, d.opts.Host))
		if err != nil {
			return err
		}
		if len(moved) == len(ids) {
			return nil
		}
		return refuseFirst(ctx, tx, ids, moved, store.StateProcessing)
	})
}

// MarkBegan implements [store.Journal].
func (d *DB) MarkBegan(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := d.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE journal SET began = true WHERE id = ANY($1) AND state = 'processing' AND owner = $2`, ids, d.opts.Host)
		return err
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
	err := d.write(ctx, func(tx pgx.Tx) error {
		moved, err := collectIDs(tx.Query(ctx, `UPDATE journal SET state = 'parked', attempts = GREATEST(attempts - 1, 0), updated_at = $1
			WHERE id = ANY($2) AND state = 'processing' RETURNING id`, d.now().UnixNano(), ids))
		if err != nil {
			return err
		}
		if len(moved) == len(ids) {
			return nil
		}
		return refuseFirst(ctx, tx, ids, moved, store.StateParked)
	})
	if err != nil {
		return fmt.Errorf("park %v: %w", ids, err)
	}
	return nil
}

// Unpark implements [store.Journal].
func (d *DB) Unpark(ctx context.Context) ([]string, error) {
	var keys []string
	err := d.write(ctx, func(tx pgx.Tx) error {
		keys = nil
		rows, err := tx.Query(ctx, `WITH moved AS (
			UPDATE journal SET state = 'queued', updated_at = $1 WHERE state = 'parked' RETURNING id, session_key)
			SELECT session_key FROM moved GROUP BY session_key ORDER BY min(id)`, d.now().UnixNano())
		if err != nil {
			return err
		}
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if len(keys) == 0 {
			keys = nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("unpark: %w", err)
	}
	return keys, nil
}

// refuseFirst returns why the first id of ids not in moved (or listed
// twice) could not move.
func refuseFirst(ctx context.Context, tx pgx.Tx, ids []int64, moved map[int64]bool, to store.State) error {
	seen := map[int64]bool{}
	for _, id := range ids {
		if !moved[id] || seen[id] {
			return refuse(ctx, tx, id, to)
		}
		seen[id] = true
	}
	return fmt.Errorf("%w: %v → %s", store.ErrBadTransition, ids, to)
}

func collectIDs(rows pgx.Rows, err error) (map[int64]bool, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// Finish implements [store.Journal].
func (d *DB) Finish(ctx context.Context, req store.FinishRequest) error {
	if !req.State.Terminal() {
		return fmt.Errorf("finish: %q is not a terminal state", req.State)
	}
	if len(req.IDs) == 0 {
		return nil
	}
	var err error
	if req.From != "" {
		_, err = d.exec(ctx, `UPDATE journal SET state = $1, reason = $2, updated_at = $3 WHERE id = ANY($4) AND state = $5`,
			string(req.State), req.Reason, d.now().UnixNano(), req.IDs, string(req.From))
	} else {
		err = d.write(ctx, func(tx pgx.Tx) error { return finish(ctx, tx, req.IDs, req.State, req.Reason, d.now()) })
	}
	if err != nil {
		return fmt.Errorf("finish %v as %s: %w", req.IDs, req.State, err)
	}
	return nil
}

// finish applies a terminal transition to all ids; an id already in that
// state is left alone.
func finish(ctx context.Context, tx pgx.Tx, ids []int64, to store.State, reason string, now time.Time) error {
	moved, err := collectIDs(tx.Query(ctx, `UPDATE journal SET state = $1, reason = $2, updated_at = $3
		WHERE id = ANY($4) AND state NOT IN ('done', 'dropped', 'failed') RETURNING id`, string(to), reason, now.UnixNano(), ids))
	if err != nil || len(moved) == len(ids) {
		return err
	}
	for _, id := range ids {
		if moved[id] {
			continue
		}
		s, err := tables.State(tablesTx{ctx, tx}, id, "")
		if err != nil || s != to {
			return refuse(ctx, tx, id, to)
		}
	}
	return nil
}

// ListUnfinished implements [store.Journal].
func (d *DB) ListUnfinished(ctx context.Context, afterID int64, limit int) ([]store.Entry, error) {
	q, args := qUnfinished, []any{afterID}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	es, err := tables.Entries(d.pool.Query(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("list unfinished: %w", d.closed(err))
	}
	return es, nil
}

// Recover implements [store.Journal].
func (d *DB) Recover(ctx context.Context, opts store.RecoverOptions) (store.Recovery, error) {
	var rec store.Recovery
	err := d.write(ctx, func(tx pgx.Tx) error {
		now := d.now()
		// SKIP LOCKED: an orphan another host is recovering right now is
		// its; after its commit that host owns it and is alive.
		mine := `owner = '' OR owner = $1 OR `
		if opts.Adopt {
			mine = `owner <> '' AND owner <> $1 AND `
		}
		open, err := tables.Entries(tx.Query(ctx, `SELECT `+entryCols+` FROM journal j
			WHERE state NOT IN ('done', 'dropped', 'failed') AND (`+mine+`NOT EXISTS
				(SELECT 1 FROM leases WHERE name = $2 || j.owner AND expires_at > $3))
			ORDER BY id FOR UPDATE SKIP LOCKED`, d.opts.Host, store.HostLeasePrefix, now.UnixNano()))
		if err != nil {
			return err
		}
		// Claimed, and no longer handed: what Recover returns is taken
		// here, not again by TakeHanded.
		claim := make([]int64, len(open))
		for i := range open {
			claim[i], open[i].Owner = open[i].ID, d.opts.Host
		}
		if len(claim) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE journal SET owner = $1, handed = false WHERE id = ANY($2) AND (owner <> $1 OR handed)`, d.opts.Host, claim); err != nil {
				return err
			}
		}
		rec, err = store.ApplyRecovery(open, opts, now, store.RecoveryWrites{
			Requeue: func(e store.Entry) error { return tables.Requeue(tablesTx{ctx, tx}, e, now.UnixNano()) },
			Fail: func(id int64, reason string) error {
				return finish(ctx, tx, []int64{id}, store.StateFailed, reason, now)
			},
			Reply: func(e store.Entry) (store.PendingReply, error) { return loadReply(ctx, tx, e) },
		})
		return err
	})
	if err != nil {
		return store.Recovery{}, fmt.Errorf("recover journal: %w", err)
	}
	return rec, nil
}

// pruneBatch bounds the entries one Prune transaction deletes.
const pruneBatch = 5000

// Prune implements [store.Journal]. It also deletes the dedupe keys whose
// TTL has passed (they catch nothing any more; SQLite caps their number
// instead).
func (d *DB) Prune(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		tag, err := d.exec(ctx, `WITH gone AS (
				SELECT id FROM journal WHERE state IN ('done', 'dropped', 'failed') AND updated_at < $1
				LIMIT $2 FOR UPDATE SKIP LOCKED),
			c AS (DELETE FROM reply_chunks WHERE journal_id IN (SELECT id FROM gone)),
			l AS (DELETE FROM live_output WHERE journal_id IN (SELECT id FROM gone)),
			t AS (DELETE FROM tool_results WHERE journal_id IN (SELECT id FROM gone)),
			r AS (DELETE FROM replies WHERE journal_id IN (SELECT id FROM gone))
			DELETE FROM journal WHERE id IN (SELECT id FROM gone)`, before.UnixNano(), pruneBatch)
		if err != nil {
			return total, fmt.Errorf("prune journal: %w", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < pruneBatch {
			break
		}
	}
	// Relayed calls whose origin never took the outcome (it died).
	if _, err := d.exec(ctx, `DELETE FROM relay WHERE created_at < $1`, before.UnixNano()); err != nil {
		return total, fmt.Errorf("prune relayed calls: %w", err)
	}
	if _, err := d.exec(ctx, `DELETE FROM dedupe WHERE seen_at <= $1`, d.now().UnixNano()-d.opts.DedupeTTL.Nanoseconds()); err != nil {
		return total, fmt.Errorf("prune dedupe keys: %w", err)
	}
	return total, nil
}
