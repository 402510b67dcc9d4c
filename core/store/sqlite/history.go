package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/clawhost/clawhost/core/store"
)

// ChatHistory implements [store.History]. The journal has no index on the
// chat: /export is rare and the journal is pruned, so a scan of it is
// cheaper than an index every Accept would pay for.
func (d *DB) ChatHistory(ctx context.Context, f store.HistoryFilter, limit int) ([]store.HistoryEntry, error) {
	if f.Instance == "" || f.ChatID == "" {
		return nil, errors.New("chat history: instance and chat id are required")
	}
	q := `SELECT ` + entryCols + `, (SELECT text FROM replies r WHERE r.journal_id = journal.id),
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
	rows, err := d.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, err)
	}
	defer rows.Close()
	var out []store.HistoryEntry
	for rows.Next() {
		var h store.HistoryEntry
		var recv, upd int64
		var st string
		var text sql.NullString
		var produced sql.NullInt64
		if err := rows.Scan(&h.ID, &h.Instance, &h.ChatID, &h.ThreadID, &h.MessageID, &h.DedupeKey, &recv,
			&h.Message, &st, &h.SessionKey, &h.Attempts, &h.Reason, &upd, &h.Owner, &h.Began, &h.Launches, &text, &produced, &h.Ran); err != nil {
			return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, err)
		}
		h.ReceivedAt, h.UpdatedAt, h.State = store.FromUnixNano(recv), store.FromUnixNano(upd), store.State(st)
		if text.Valid {
			h.Replied, h.Reply, h.RepliedAt = true, text.String, store.FromUnixNano(produced.Int64)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chat history of %s:%s: %w", f.Instance, f.ChatID, err)
	}
	slices.Reverse(out)
	return out, nil
}
