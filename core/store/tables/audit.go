package tables

import (
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Audit is [store.AuditTrail]'s Audit inside t, e.At set by the caller.
func Audit(t Tx, e store.AuditEvent) error {
	_, err := t.Exec(`INSERT INTO audit(at, kind, actor, instance, chat_id, subject, decision, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.At.UnixNano(), e.Kind, e.Actor, e.Instance, e.ChatID, e.Subject, e.Decision, e.Detail)
	return err
}

// ListAudit is [store.AuditTrail]'s ListAudit: newest first, at most limit
// (0: all). Its text changes with f: an engine that prepares statements
// runs it unprepared.
func ListAudit(r Reader, f store.AuditFilter, limit int) ([]store.AuditEvent, error) {
	var w where
	w.period("at", f.Since, f.Until)
	w.equal([2]string{"kind", f.Kind}, [2]string{"subject", f.Subject}, [2]string{"chat_id", f.ChatID})
	q := `SELECT id, at, kind, actor, instance, chat_id, subject, decision, detail FROM audit` + w.String() + ` ORDER BY at DESC, id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := r.Query(q, w.args...)
	return collect(rows, err, func(rows Rows) (store.AuditEvent, error) {
		var e store.AuditEvent
		var at int64
		err := rows.Scan(&e.ID, &at, &e.Kind, &e.Actor, &e.Instance, &e.ChatID, &e.Subject, &e.Decision, &e.Detail)
		e.At = time.Unix(0, at)
		return e, err
	})
}

// PruneAudit is [store.AuditTrail]'s PruneAudit inside t: how many events
// older than before it deleted.
func PruneAudit(t Tx, before time.Time) (int64, error) {
	return t.Exec(`DELETE FROM audit WHERE at < ?`, before.UnixNano())
}
