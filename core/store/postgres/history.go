package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/clawhost/clawhost/core/store"
)

// ChatHistory implements [store.History]: one query, no index on the chat
// (/export is rare, the journal pruned; Accept does not pay for one).
func (d *DB) ChatHistory(ctx context.Context, f store.HistoryFilter, limit int) ([]store.HistoryEntry, error) {
	if f.Instance == "" || f.ChatID == "" {
		return nil, errors.New("chat history: instance and chat id are required")
	}
	q := `SELECT ` + entryCols + `, (SELECT text FROM replies r WHERE r.journal_id = journal.id),
		(SELECT produced_at FROM replies r WHERE r.journal_id = journal.id),
		EXISTS (SELECT 1 FROM usage u WHERE u.at >= $3 AND u.journal_id = journal.id)
		FROM journal WHERE instance = $1 AND chat_id = $2 AND received_at >= $3`
	args := []any{f.Instance, f.ChatID, store.UnixNano(f.Since)}
	if f.ThreadID != "" {
		args = append(args, f.ThreadID)
		q += fmt.Sprintf(` AND thread_id = $%d`, len(args))
	}
	q += ` ORDER BY id DESC`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, d.closed(err))
	}
	defer rows.Close()
	var out []store.HistoryEntry
	for rows.Next() {
		var h store.HistoryEntry
		var recv, upd int64
		var st string
		var text *string
		var produced *int64
		if err := rows.Scan(&h.ID, &h.Instance, &h.ChatID, &h.ThreadID, &h.MessageID, &h.DedupeKey, &recv,
			&h.Message, &st, &h.SessionKey, &h.Attempts, &h.Reason, &upd, &h.Owner, &h.Began, &h.Launches, &text, &produced, &h.Ran); err != nil {
			return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, err)
		}
		h.ReceivedAt, h.UpdatedAt, h.State = store.FromUnixNano(recv), store.FromUnixNano(upd), store.State(st)
		if text != nil {
			h.Replied, h.Reply = true, *text
			if produced != nil {
				h.RepliedAt = store.FromUnixNano(*produced)
			}
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, err)
	}
	slices.Reverse(out)
	return out, nil
}
