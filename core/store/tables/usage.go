package tables

import (
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// UsageWhere is the WHERE clause of f (with its leading " WHERE ", "" for
// none) and its arguments, for an engine's own sums over the ledger.
func UsageWhere(f store.UsageFilter) (string, []any) {
	var w where
	w.period("at", f.Since, f.Until)
	w.equal([2]string{"agent", f.Agent}, [2]string{"instance", f.Instance}, [2]string{"chat_id", f.ChatID}, [2]string{"sender", f.Sender})
	return w.String(), w.args
}

// ListUsage is [store.Ledger]'s ListUsage: oldest first, at most limit (0:
// all). Its text changes with f, as ListAudit's.
func ListUsage(r Reader, f store.UsageFilter, limit int) ([]store.TurnUsage, error) {
	where, args := UsageWhere(f)
	q := `SELECT at, agent, instance, chat_id, sender, model, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
		cost_usd, duration_ns, outcome, estimate FROM usage` + where + ` ORDER BY at, id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := r.Query(q, args...)
	return collect(rows, err, func(rows Rows) (store.TurnUsage, error) {
		var u store.TurnUsage
		var at, dur int64
		err := rows.Scan(&at, &u.Agent, &u.Instance, &u.ChatID, &u.Sender, &u.Model, &u.InputTokens, &u.OutputTokens,
			&u.CacheReadTokens, &u.CacheCreationTokens, &u.CostUSD, &dur, &u.Outcome, &u.Estimate)
		u.At, u.Duration = time.Unix(0, at), time.Duration(dur)
		return u, err
	})
}
