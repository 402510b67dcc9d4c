package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// RecordReply implements [store.Outbox].
func (d *DB) RecordReply(ctx context.Context, r store.Reply) error {
	write := d.w.do
	if r.AttemptFirst && len(r.Chunks) > 0 {
		write = d.w.durable // chunk 0's send follows
	}
	if r.Parts != nil && len(r.Parts) != len(r.Chunks) {
		return fmt.Errorf("record reply to %d: %d parts for %d chunks", r.JournalID, len(r.Parts), len(r.Chunks))
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
		for _, id := range r.Covers {
			if id == r.JournalID {
				return fmt.Errorf("entry %d covers itself", id)
			}
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
		if u := r.Usage; u != nil {
			at := u.At
			if at.IsZero() {
				at = now
			}
			if _, err := t.exec(`INSERT INTO usage(journal_id, at, agent, instance, chat_id, sender, model, input_tokens, output_tokens,
				cache_read_tokens, cache_creation_tokens, cost_usd, duration_ns, outcome, estimate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.JournalID, at.UnixNano(), u.Agent, u.Instance, u.ChatID, u.Sender, u.Model, u.InputTokens, u.OutputTokens,
				u.CacheReadTokens, u.CacheCreationTokens, u.CostUSD, int64(u.Duration), u.Outcome, u.Estimate); err != nil {
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
		if u.Key == "" {
			return errors.New("session update: empty key")
		}
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
			var x int
			err := t.scan(`SELECT 1 FROM reply_chunks WHERE journal_id = ? AND idx = ?`, []any{s.JournalID, s.Index}, &x)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("chunk %d: %w", s.Index, store.ErrNotFound)
			}
			if err != nil {
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
	d.reads.Add(3) // BEGIN, the entry, ROLLBACK
	e, err := scanEntry(tx.QueryRowContext(ctx, qEntry, journalID))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.PendingReply{}, fmt.Errorf("reply to %d: %w", journalID, err)
	}
	p, err := loadReply(e, func(q string, args ...any) *sql.Row { d.reads.Add(1); return tx.QueryRowContext(ctx, q, args...) },
		func(q string, args ...any) (*sql.Rows, error) {
			d.reads.Add(1)
			return tx.QueryContext(ctx, q, args...)
		})
	if err != nil {
		return store.PendingReply{}, fmt.Errorf("reply to %d: %w", journalID, err)
	}
	return p, nil
}

func (t *wtx) pendingReply(e store.Entry) (store.PendingReply, error) {
	return loadReply(e,
		func(q string, args ...any) *sql.Row {
			s, err := t.stmt(q)
			if err != nil {
				return t.w.conn.QueryRowContext(context.Background(), q, args...)
			}
			return s.QueryRowContext(context.Background(), args...)
		},
		t.query)
}

// loadReply reads the reply and chunks of e through the given query
// functions (a read transaction or the writer's).
func loadReply(e store.Entry, row func(string, ...any) *sql.Row, rows func(string, ...any) (*sql.Rows, error)) (store.PendingReply, error) {
	p := store.PendingReply{Entry: e}
	var produced int64
	err := row(`SELECT instance, chat_id, thread_id, text, produced_at, format, reply_to, draft_id FROM replies WHERE journal_id = ?`, e.ID).
		Scan(&p.Reply.Instance, &p.Reply.ChatID, &p.Reply.ThreadID, &p.Reply.Text, &produced, &p.Reply.Format, &p.Reply.ReplyTo, &p.Reply.DraftID)
	if errors.Is(err, sql.ErrNoRows) {
		return store.PendingReply{}, store.ErrNotFound
	}
	if err != nil {
		return store.PendingReply{}, err
	}
	p.Reply.JournalID, p.Reply.ProducedAt = e.ID, store.FromUnixNano(produced)
	rs, err := rows(`SELECT c.idx, t.text, t.format, t.attach, sent_at, platform_ids, attempted_at, uncertain
		FROM reply_chunks c LEFT JOIN chunk_texts t ON t.journal_id = c.journal_id AND t.idx = c.idx WHERE c.journal_id = ? ORDER BY c.idx`, e.ID)
	if err != nil {
		return store.PendingReply{}, err
	}
	defer rs.Close()
	for rs.Next() {
		var c store.Chunk
		var sent, attempted int64
		var ids string
		var text, format sql.NullString // RecordReply writes both rows, or neither
		if err := rs.Scan(&c.Index, &text, &format, &c.Part.Attach, &sent, &ids, &attempted, &c.Uncertain); err != nil {
			return store.PendingReply{}, err
		}
		if !text.Valid {
			return store.PendingReply{}, fmt.Errorf("chunk %d has no text", c.Index)
		}
		c.Text, c.Part.Format = text.String, format.String
		if len(c.Part.Attach) == 0 {
			c.Part.Attach = nil
		}
		c.SentAt, c.AttemptedAt = store.FromUnixNano(sent), store.FromUnixNano(attempted)
		if c.PlatformIDs, err = store.DecodeIDs(ids); err != nil {
			return store.PendingReply{}, fmt.Errorf("chunk %d platform ids: %w", c.Index, err)
		}
		p.Reply.Chunks = append(p.Reply.Chunks, c.Text)
		p.Chunks = append(p.Chunks, c)
	}
	if err := rs.Err(); err != nil {
		return store.PendingReply{}, err
	}
	p.Reply.Parts = store.PartsOf(p.Chunks)
	return p, nil
}

// MarkAttempt implements [store.Outbox].
func (d *DB) MarkAttempt(ctx context.Context, journalID int64, index int) error {
	err := d.w.durable(ctx, func(t *wtx) error {
		n, err := t.execN(`UPDATE reply_chunks SET attempted_at = ? WHERE journal_id = ? AND idx = ? AND attempted_at = 0 AND sent_at = 0`,
			d.now().UnixNano(), journalID, index)
		if err != nil || n == 1 {
			return err
		}
		var x int
		err = t.scan(`SELECT 1 FROM reply_chunks WHERE journal_id = ? AND idx = ?`, []any{journalID, index}, &x)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("chunk %d: %w", index, store.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("mark chunk %d of %d attempted: %w", index, journalID, err)
	}
	return nil
}

// RecordLive implements [store.Outbox].
func (d *DB) RecordLive(ctx context.Context, l store.Live) error {
	err := d.w.durable(ctx, func(t *wtx) error {
		st, err := t.state(l.JournalID)
		if err != nil {
			return err
		}
		if st.Rank() > store.StateProcessing.Rank() {
			return fmt.Errorf("%w: live output of a %s entry", store.ErrBadTransition, st)
		}
		ids := store.EncodeIDs(l.PlatformIDs)
		_, err = t.exec(`INSERT INTO live_output(journal_id, seq, kind, text, platform_ids) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT(journal_id, seq) DO UPDATE SET kind = excluded.kind, text = excluded.text,
			platform_ids = CASE WHEN excluded.platform_ids = '' THEN live_output.platform_ids ELSE excluded.platform_ids END`,
			l.JournalID, l.Seq, string(l.Kind), l.Text, ids)
		return err
	})
	if err != nil {
		return fmt.Errorf("record live output %d of %d: %w", l.Seq, l.JournalID, err)
	}
	return nil
}

// LiveOutput implements [store.Outbox].
func (d *DB) LiveOutput(ctx context.Context, journalID int64) ([]store.Live, error) {
	rows, err := d.query(ctx, `SELECT seq, kind, text, platform_ids FROM live_output WHERE journal_id = ? ORDER BY seq`, journalID)
	if err != nil {
		return nil, fmt.Errorf("live output of %d: %w", journalID, err)
	}
	defer rows.Close()
	var out []store.Live
	for rows.Next() {
		l := store.Live{JournalID: journalID}
		var kind, ids string
		if err := rows.Scan(&l.Seq, &kind, &l.Text, &ids); err != nil {
			return nil, fmt.Errorf("live output of %d: %w", journalID, err)
		}
		l.Kind = store.LiveKind(kind)
		if l.PlatformIDs, err = store.DecodeIDs(ids); err != nil {
			return nil, fmt.Errorf("live output of %d: %w", journalID, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("live output of %d: %w", journalID, err)
	}
	return out, nil
}
