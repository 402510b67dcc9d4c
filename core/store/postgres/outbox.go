package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// RecordReply implements [store.Outbox].
func (d *DB) RecordReply(ctx context.Context, r store.Reply) error {
	if err := tables.CheckReply(r); err != nil {
		return err
	}
	var err error
	for range 10 { // a new session's insert that lost a race runs again (errRaced)
		err = d.recordReply(ctx, r)
		if !errors.Is(err, errRaced) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("record reply to %d: %w", r.JournalID, err)
	}
	return nil
}

// recordReply is RecordReply's transaction.
func (d *DB) recordReply(ctx context.Context, r store.Reply) error {
	return d.write(ctx, func(tx pgx.Tx) error {
		now := d.now()
		to := store.StateReplied
		if len(r.Chunks) == 0 {
			to = store.StateDone
		}
		var inst, chat, thread string
		err := tx.QueryRow(ctx, `UPDATE journal SET state = $1, updated_at = $2, owner = $4
			WHERE id = $3 AND state IN ('accepted', 'queued', 'processing')
			RETURNING instance, chat_id, thread_id`, string(to), now.UnixNano(), r.JournalID, d.opts.Host).Scan(&inst, &chat, &thread)
		if errors.Is(err, pgx.ErrNoRows) {
			return refuse(ctx, tx, r.JournalID, store.StateReplied)
		}
		if err != nil {
			return err
		}
		rr := r
		if rr.Instance == "" && rr.ChatID == "" {
			rr.Instance, rr.ChatID, rr.ThreadID = inst, chat, thread
		}
		produced := rr.ProducedAt
		if produced.IsZero() {
			produced = now
		}
		if len(rr.Covers) > 0 {
			if err := finish(ctx, tx, rr.Covers, store.StateDone, "", now); err != nil {
				return err
			}
		}
		// The reply and its chunks in one statement.
		idx := make([]int32, len(rr.Chunks))
		for i := range idx {
			idx[i] = int32(i)
		}
		attempted := int64(0) // chunk 0's attempt (AttemptFirst)
		if rr.AttemptFirst {
			attempted = now.UnixNano()
		}
		formats, attach := make([]string, len(rr.Chunks)), make([][]byte, len(rr.Chunks))
		for i, p := range rr.Parts {
			formats[i], attach[i] = p.Format, p.Attach
		}
		_, err = tx.Exec(ctx, `WITH r AS (
				INSERT INTO replies(journal_id, instance, chat_id, thread_id, text, produced_at, chunks, format, reply_to, draft_id)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10))
			INSERT INTO reply_chunks(journal_id, idx, text, attempted_at, format, attach)
				SELECT $1, i, t, CASE WHEN i = 0 THEN $13::bigint ELSE 0 END, f, a FROM unnest($11::int[], $12::text[], $14::text[], $15::bytea[]) AS c(i, t, f, a)`,
			rr.JournalID, rr.Instance, rr.ChatID, rr.ThreadID, rr.Text, produced.UnixNano(), len(rr.Chunks), rr.Format, rr.ReplyTo, rr.DraftID,
			idx, rr.Chunks, attempted, formats, attach)
		if err != nil {
			return err
		}
		if u := rr.Session; u != nil {
			if _, err := d.updateSession(ctx, tx, u.Key, u.Fn); err != nil {
				return err
			}
		}
		if c := rr.ClaudeCost; c != nil {
			// Not when the session moved to another claude session (a reset).
			if _, err := tx.Exec(ctx, `UPDATE sessions SET claude_cost_usd = $1, claude_cost_of = $2 WHERE key = $3 AND claude_session_id = $2`,
				c.USD, c.Of, c.Key); err != nil {
				return err
			}
		}
		if rr.Usage == nil {
			return nil
		}
		return tables.InsertUsage(tablesTx{ctx, tx}, rr.JournalID, rr.Usage, now.UnixNano())
	})
}

// MarkSent implements [store.Outbox].
func (d *DB) MarkSent(ctx context.Context, s store.ChunkSent) (store.MarkSentResult, error) {
	var res store.MarkSentResult
	ids := store.EncodeIDs(s.PlatformIDs)
	err := d.write(ctx, func(tx pgx.Tx) error {
		now := d.now()
		sent := s.SentAt
		if sent.IsZero() {
			sent = now
		}
		// Lock the entry first: MarkSents of one reply's chunks then run
		// one after the other, and the last one sees the others' marks
		// (each statement of a read-committed transaction reads what was
		// committed before it started).
		if _, err := tx.Exec(ctx, `SELECT 1 FROM journal WHERE id = $1 FOR UPDATE`, s.JournalID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE reply_chunks SET sent_at = $1, platform_ids = $2, uncertain = $3
			WHERE journal_id = $4 AND idx = $5 AND sent_at = 0`, sent.UnixNano(), ids, s.Uncertain, s.JournalID, s.Index)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			if err := tables.ChunkExists(tablesTx{ctx, tx}, s.JournalID, s.Index); err != nil {
				return err
			}
		}
		var unsent bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM reply_chunks WHERE journal_id = $1 AND sent_at = 0)`, s.JournalID).Scan(&unsent); err != nil {
			return err
		}
		res = store.MarkSentResult{AllSent: !unsent}
		if unsent {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE journal SET state = 'done', updated_at = $1 WHERE id = $2 AND state = 'replied'`, now.UnixNano(), s.JournalID)
		return err
	})
	if err != nil {
		return store.MarkSentResult{}, fmt.Errorf("mark chunk %d of %d sent: %w", s.Index, s.JournalID, err)
	}
	return res, nil
}

// PendingReply implements [store.Outbox].
func (d *DB) PendingReply(ctx context.Context, journalID int64) (store.PendingReply, error) {
	var p store.PendingReply
	// One repeatable-read transaction: entry, reply and chunks agree.
	err := pgx.BeginTxFunc(ctx, d.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		e, err := journal.Entry(tablesTx{ctx, tx}, journalID)
		if err != nil {
			return err
		}
		p, err = loadReply(ctx, tx, e)
		return err
	})
	if err != nil {
		return store.PendingReply{}, fmt.Errorf("reply to %d: %w", journalID, d.closed(err))
	}
	return p, nil
}

// qChunks are a reply's chunks, as tables.LoadReply reads them.
const qChunks = `SELECT idx, text, format, attach, sent_at, platform_ids, attempted_at, uncertain FROM reply_chunks WHERE journal_id = ? ORDER BY idx`

// loadReply reads the reply and chunks of e inside tx.
func loadReply(ctx context.Context, tx pgx.Tx, e store.Entry) (store.PendingReply, error) {
	return tables.LoadReply(tablesTx{ctx, tx}, e, qChunks)
}
