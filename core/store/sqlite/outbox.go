package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// RecordReply implements [store.Outbox].
func (d *DB) RecordReply(ctx context.Context, r store.Reply) error {
	write := d.w.do
	if r.AttemptFirst && len(r.Chunks) > 0 {
		write = d.w.durable // chunk 0's send follows
	}
	if err := tables.CheckReply(r); err != nil {
		return err
	}
	err := write(ctx, func(t *wtx) error {
		now := d.now()
		to := store.StateReplied
		if len(r.Chunks) == 0 {
			to = store.StateDone
		}
		// Only a refused transition reads the state to say why, and only a
		// reply without a chat reads the entry's (not with RETURNING: it
		// builds two temporary tables per statement, measured ~6 % of the
		// writer's time in BenchmarkPipeline).
		// finished_at is set only by the reply with nothing to send, which
		// ends the entry: a statement that sets it, even to 0, maintains
		// both journal indexes (migration 6).
		q := `UPDATE journal SET state = 'replied', updated_at = ?1, owner = ?2 WHERE id = ?3 AND state IN ('accepted', 'queued', 'processing')`
		if to == store.StateDone {
			q = `UPDATE journal SET state = 'done', updated_at = ?1, owner = ?2, finished_at = ?1 WHERE id = ?3 AND state IN ('accepted', 'queued', 'processing')`
		}
		n, err := t.execN(q, now.UnixNano(), d.opts.Host, r.JournalID)
		if err != nil {
			return err
		}
		if n == 0 {
			st, err := t.state(r.JournalID)
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: %s → replied", store.ErrBadTransition, st)
		}
		if r.Instance == "" && r.ChatID == "" {
			if err := t.scan(`SELECT instance, chat_id, thread_id FROM journal WHERE id = ?`, []any{r.JournalID}, &r.Instance, &r.ChatID, &r.ThreadID); err != nil {
				return err
			}
		}
		produced := r.ProducedAt
		if produced.IsZero() {
			produced = now
		}
		if len(r.Covers) > 0 {
			if err := t.finish(r.Covers, store.StateDone, "", now); err != nil {
				return err
			}
		}
		if _, err := t.exec(`INSERT INTO replies(journal_id, instance, chat_id, thread_id, text, produced_at, chunks, format, reply_to, draft_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.JournalID, r.Instance, r.ChatID, r.ThreadID, r.Text, produced.UnixNano(), len(r.Chunks), r.Format, r.ReplyTo, r.DraftID); err != nil {
			return err
		}
		if r.Usage != nil {
			if err := tables.InsertUsage(tablesTx{t}, r.JournalID, r.Usage, now.UnixNano()); err != nil {
				return err
			}
		}
		if err := t.replySession(r, now); err != nil {
			return err
		}
		return t.insertChunks(r, now)
	})
	if err != nil {
		return fmt.Errorf("record reply to %d: %w", r.JournalID, err)
	}
	return nil
}

// replySession writes the reply's session bookkeeping and claude's
// running total. Of one session they are one write of its row: the total
// goes in the update's, on setClaudeCost's terms (the row, written by the
// update, is of the total's claude session).
func (t *wtx) replySession(r store.Reply, now time.Time) error {
	cost := r.ClaudeCost
	if u := r.Session; u != nil {
		fn := u.Fn
		if c := cost; c != nil && c.Key == u.Key {
			cost = nil
			fn = func(s *store.Session, found bool) error {
				if err := u.Fn(s, found); err != nil {
					return err
				}
				if s.ClaudeSessionID == c.Of {
					s.ClaudeCostUSD, s.ClaudeCostOf = c.USD, c.Of
				}
				return nil
			}
		}
		if _, err := t.updateSession(u.Key, fn, now); err != nil {
			return err
		}
	}
	if cost != nil {
		return t.setClaudeCost(*cost)
	}
	return nil
}

// insertChunks writes the reply's chunks, the first marked attempted at now
// when its send follows in the same write.
func (t *wtx) insertChunks(r store.Reply, now time.Time) error {
	for i, c := range r.Chunks {
		attempted := int64(0)
		if i == 0 && r.AttemptFirst {
			attempted = now.UnixNano()
		}
		// The text beside the row its send marks change (migration 7).
		if _, err := t.exec(`INSERT INTO reply_chunks(journal_id, idx, text, attempted_at) VALUES (?, ?, '', ?)`, r.JournalID, i, attempted); err != nil {
			return err
		}
		if r.Parts == nil {
			if _, err := t.exec(`INSERT INTO chunk_texts(journal_id, idx, text) VALUES (?, ?, ?)`, r.JournalID, i, c); err != nil {
				return err
			}
			continue
		}
		p := r.Parts[i]
		if _, err := t.exec(`INSERT INTO chunk_texts(journal_id, idx, text, format, attach) VALUES (?, ?, ?, ?, ?)`, r.JournalID, i, c, p.Format, p.Attach); err != nil {
			return err
		}
	}
	return nil
}

// MarkSent implements [store.Outbox].
func (d *DB) MarkSent(ctx context.Context, s store.ChunkSent) (store.MarkSentResult, error) {
	var res store.MarkSentResult
	err := d.w.do(ctx, func(t *wtx) error {
		now := d.now()
		sent := s.SentAt
		if sent.IsZero() {
			sent = now
		}
		ids := store.EncodeIDs(s.PlatformIDs)
		n, err := t.execN(`UPDATE reply_chunks SET sent_at = ?, platform_ids = ?, uncertain = ? WHERE journal_id = ? AND idx = ? AND sent_at = 0`,
			sent.UnixNano(), ids, s.Uncertain, s.JournalID, s.Index)
		if err != nil {
			return err
		}
		if n == 0 { // already sent (first record wins), or no such chunk
			if err := tables.ChunkExists(tablesTx{t}, s.JournalID, s.Index); err != nil {
				return err
			}
		}
		// The last chunk finishes the entry: one statement when it does.
		done, err := t.execN(`UPDATE journal SET state = 'done', updated_at = ?1, finished_at = ?1 WHERE id = ?2 AND state = 'replied'
			AND NOT EXISTS (SELECT 1 FROM reply_chunks WHERE journal_id = ?2 AND sent_at = 0)`, now.UnixNano(), s.JournalID)
		if err != nil {
			return err
		}
		if done == 1 {
			res = store.MarkSentResult{AllSent: true}
			return nil
		}
		var unsent bool
		if err := t.scan(`SELECT EXISTS (SELECT 1 FROM reply_chunks WHERE journal_id = ? AND sent_at = 0)`, []any{s.JournalID}, &unsent); err != nil {
			return err
		}
		res = store.MarkSentResult{AllSent: !unsent}
		return nil
	})
	if err != nil {
		return store.MarkSentResult{}, fmt.Errorf("mark chunk %d of %d sent: %w", s.Index, s.JournalID, err)
	}
	return res, nil
}

// PendingReply implements [store.Outbox].
func (d *DB) PendingReply(ctx context.Context, journalID int64) (store.PendingReply, error) {
	// Read in one read transaction so entry, reply and chunks agree.
	tx, err := d.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.PendingReply{}, fmt.Errorf("reply to %d: %w", journalID, err)
	}
	defer tx.Rollback()
	d.reads.Add(2) // BEGIN, ROLLBACK
	r := tablesReadTx{ctx: ctx, tx: tx, d: d}
	e, err := journal.Entry(r, journalID)
	if err != nil {
		return store.PendingReply{}, fmt.Errorf("reply to %d: %w", journalID, err)
	}
	p, err := tables.LoadReply(r, e, qChunks)
	if err != nil {
		return store.PendingReply{}, fmt.Errorf("reply to %d: %w", journalID, err)
	}
	return p, nil
}

func (t *wtx) pendingReply(e store.Entry) (store.PendingReply, error) {
	return tables.LoadReply(tablesTx{t}, e, qChunks)
}

// qChunks are a reply's chunks, as tables.LoadReply reads them: the text
// is beside the row its send marks change (migration 7).
const qChunks = `SELECT c.idx, t.text, t.format, t.attach, sent_at, platform_ids, attempted_at, uncertain
	FROM reply_chunks c LEFT JOIN chunk_texts t ON t.journal_id = c.journal_id AND t.idx = c.idx WHERE c.journal_id = ? ORDER BY c.idx`
