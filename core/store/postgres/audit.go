package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
)

// Audit implements [store.AuditTrail].
func (d *DB) Audit(ctx context.Context, e store.AuditEvent) error {
	err := d.write(ctx, func(tx pgx.Tx) error {
		at := e.At
		if at.IsZero() {
			at = d.now()
		}
		_, err := tx.Exec(ctx, `INSERT INTO audit(at, kind, actor, instance, chat_id, subject, decision, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			at.UnixNano(), e.Kind, e.Actor, e.Instance, e.ChatID, e.Subject, e.Decision, e.Detail)
		return err
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// auditWhere is the WHERE clause of f and its arguments.
func auditWhere(f store.AuditFilter) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if !f.Since.IsZero() {
		add("at >= $%d", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("at < $%d", f.Until.UnixNano())
	}
	for _, c := range []struct{ col, v string }{{"kind", f.Kind}, {"subject", f.Subject}, {"chat_id", f.ChatID}} {
		if c.v != "" {
			add(c.col+" = $%d", c.v)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListAudit implements [store.AuditTrail].
func (d *DB) ListAudit(ctx context.Context, f store.AuditFilter, limit int) ([]store.AuditEvent, error) {
	where, args := auditWhere(f)
	q := `SELECT id, at, kind, actor, instance, chat_id, subject, decision, detail FROM audit` + where + ` ORDER BY at DESC, id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", d.closed(err))
	}
	defer rows.Close()
	var out []store.AuditEvent
	for rows.Next() {
		var e store.AuditEvent
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Actor, &e.Instance, &e.ChatID, &e.Subject, &e.Decision, &e.Detail); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		e.At = time.Unix(0, at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// PruneAudit implements [store.AuditTrail].
func (d *DB) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := d.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM audit WHERE at < $1`, before.UnixNano())
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}
