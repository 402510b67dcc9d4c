package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Audit implements [store.AuditTrail].
func (d *DB) Audit(ctx context.Context, e store.AuditEvent) error {
	err := d.w.do(ctx, func(t *wtx) error {
		at := e.At
		if at.IsZero() {
			at = d.now()
		}
		_, err := t.exec(`INSERT INTO audit(at, kind, actor, instance, chat_id, subject, decision, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
		conds = append(conds, cond)
		args = append(args, arg)
	}
	if !f.Since.IsZero() {
		add("at >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("at < ?", f.Until.UnixNano())
	}
	for _, c := range []struct{ col, v string }{{"kind", f.Kind}, {"subject", f.Subject}, {"chat_id", f.ChatID}} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
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
	rows, err := d.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
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
	err := d.w.do(ctx, func(t *wtx) error {
		var err error
		n, err = t.execN(`DELETE FROM audit WHERE at < ?`, before.UnixNano())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}
