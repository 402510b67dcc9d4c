package tables

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
)

// CheckReply is what [store.Outbox]'s RecordReply requires of r, checked
// before the engine writes; the error names the reply.
func CheckReply(r store.Reply) error {
	for _, id := range r.Covers {
		if id == r.JournalID {
			return fmt.Errorf("record reply to %d: entry %d covers itself", r.JournalID, id)
		}
	}
	if r.Parts != nil && len(r.Parts) != len(r.Chunks) {
		return fmt.Errorf("record reply to %d: %d parts for %d chunks", r.JournalID, len(r.Parts), len(r.Chunks))
	}
	if r.Session != nil && r.Session.Key == "" {
		return fmt.Errorf("record reply to %d: session update: empty key", r.JournalID)
	}
	return nil
}

// InsertUsage writes the usage of the turn that replied to journalID
// inside t, u.At defaulting to now.
func InsertUsage(t Tx, journalID int64, u *store.TurnUsage, now int64) error {
	at := store.UnixNano(u.At)
	if u.At.IsZero() {
		at = now
	}
	_, err := t.Exec(`INSERT INTO usage(journal_id, at, agent, instance, chat_id, sender, model, input_tokens, output_tokens,
		cache_read_tokens, cache_creation_tokens, cost_usd, duration_ns, outcome, estimate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		journalID, at, u.Agent, u.Instance, u.ChatID, u.Sender, u.Model, u.InputTokens, u.OutputTokens,
		u.CacheReadTokens, u.CacheCreationTokens, u.CostUSD, int64(u.Duration), u.Outcome, u.Estimate)
	return err
}

// LoadReply reads the reply to e and its chunks through r; chunks is the
// engine's query of a reply's chunks (its text may be in a table of its
// own), one parameter, the entry's id, and the columns idx, text, format,
// attach, sent_at, platform_ids, attempted_at, uncertain, in idx order.
func LoadReply(r Reader, e store.Entry, chunks string) (store.PendingReply, error) {
	p := store.PendingReply{Entry: e}
	var produced int64
	err := r.Scan(`SELECT instance, chat_id, thread_id, text, produced_at, format, reply_to, draft_id FROM replies WHERE journal_id = ?`, []any{e.ID},
		&p.Reply.Instance, &p.Reply.ChatID, &p.Reply.ThreadID, &p.Reply.Text, &produced, &p.Reply.Format, &p.Reply.ReplyTo, &p.Reply.DraftID)
	if errors.Is(err, ErrNoRows) {
		return store.PendingReply{}, store.ErrNotFound
	}
	if err != nil {
		return store.PendingReply{}, err
	}
	p.Reply.JournalID, p.Reply.ProducedAt = e.ID, store.FromUnixNano(produced)
	rows, err := r.Query(chunks, e.ID)
	p.Chunks, err = collect(rows, err, scanChunk)
	if err != nil {
		return store.PendingReply{}, err
	}
	for _, c := range p.Chunks {
		p.Reply.Chunks = append(p.Reply.Chunks, c.Text)
	}
	p.Reply.Parts = store.PartsOf(p.Chunks)
	return p, nil
}

func scanChunk(rows Rows) (store.Chunk, error) {
	var c store.Chunk
	var sent, attempted int64
	var ids string
	var text, format sql.NullString // SQLite's RecordReply writes both rows, or neither
	if err := rows.Scan(&c.Index, &text, &format, &c.Part.Attach, &sent, &ids, &attempted, &c.Uncertain); err != nil {
		return c, err
	}
	if !text.Valid {
		return c, fmt.Errorf("chunk %d has no text", c.Index)
	}
	c.Text, c.Part.Format = text.String, format.String
	if len(c.Part.Attach) == 0 {
		c.Part.Attach = nil
	}
	c.SentAt, c.AttemptedAt = store.FromUnixNano(sent), store.FromUnixNano(attempted)
	var err error
	if c.PlatformIDs, err = store.DecodeIDs(ids); err != nil {
		return c, fmt.Errorf("chunk %d platform ids: %w", c.Index, err)
	}
	return c, nil
}

// ChunkExists is nil when chunk index of the reply to journalID exists,
// store.ErrNotFound (naming it) when not.
func ChunkExists(r Reader, journalID int64, index int) error {
	var x int
	err := r.Scan(`SELECT 1 FROM reply_chunks WHERE journal_id = ? AND idx = ?`, []any{journalID, index}, &x)
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("chunk %d: %w", index, store.ErrNotFound)
	}
	return err
}

// MarkAttempt is [store.Outbox]'s MarkAttempt inside t at now.
func MarkAttempt(t Tx, journalID int64, index int, now int64) error {
	n, err := t.Exec(`UPDATE reply_chunks SET attempted_at = ? WHERE journal_id = ? AND idx = ? AND attempted_at = 0 AND sent_at = 0`,
		now, journalID, index)
	if err != nil || n == 1 {
		return err
	}
	return ChunkExists(t, journalID, index)
}

// RecordLive is [store.Outbox]'s RecordLive inside t; lock is appended to
// the read of the entry's state (PostgreSQL's " FOR SHARE" makes a
// RecordReply of the entry wait until this commits).
func RecordLive(t Tx, l store.Live, lock string) error {
	st, err := State(t, l.JournalID, lock)
	if err != nil {
		return err
	}
	if st.Rank() > store.StateProcessing.Rank() {
		return fmt.Errorf("%w: live output of a %s entry", store.ErrBadTransition, st)
	}
	_, err = t.Exec(`INSERT INTO live_output(journal_id, seq, kind, text, platform_ids) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(journal_id, seq) DO UPDATE SET kind = excluded.kind, text = excluded.text,
		platform_ids = CASE WHEN excluded.platform_ids = '' THEN live_output.platform_ids ELSE excluded.platform_ids END`,
		l.JournalID, l.Seq, string(l.Kind), l.Text, store.EncodeIDs(l.PlatformIDs))
	return err
}

// LiveOutput is [store.Outbox]'s LiveOutput.
func LiveOutput(r Reader, journalID int64) ([]store.Live, error) {
	rows, err := r.Query(`SELECT seq, kind, text, platform_ids FROM live_output WHERE journal_id = ? ORDER BY seq`, journalID)
	out, err := collect(rows, err, func(rows Rows) (store.Live, error) {
		l := store.Live{JournalID: journalID}
		var kind, ids string
		if err := rows.Scan(&l.Seq, &kind, &l.Text, &ids); err != nil {
			return l, err
		}
		l.Kind = store.LiveKind(kind)
		var err error
		l.PlatformIDs, err = store.DecodeIDs(ids)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("live output of %d: %w", journalID, err)
	}
	return out, nil
}
