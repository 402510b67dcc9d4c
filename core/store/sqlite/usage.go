package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// usageWhere is the WHERE clause of f and its arguments.
func usageWhere(f store.UsageFilter) (string, []any) {
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
	for _, c := range []struct{ col, v string }{{"agent", f.Agent}, {"instance", f.Instance}, {"chat_id", f.ChatID}, {"sender", f.Sender}} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// SumUsage implements [store.Ledger].
func (d *DB) SumUsage(ctx context.Context, f store.UsageFilter) (store.UsageSum, error) {
	where, args := usageWhere(f)
	var s store.UsageSum
	err := d.rdb.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
		coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_creation_tokens), 0), coalesce(sum(cost_usd), 0),
		count(*) FILTER (WHERE estimate != 0), coalesce(sum(cost_usd) FILTER (WHERE estimate != 0), 0), coalesce(max(cost_usd), 0) FROM usage`+where, args...).
		Scan(&s.Turns, &s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheCreationTokens, &s.CostUSD, &s.Estimates, &s.EstimatedUSD, &s.MaxUSD)
	if err != nil {
		return s, fmt.Errorf("sum usage: %w", err)
	}
	return s, nil
}

// ListUsage implements [store.Ledger].
func (d *DB) ListUsage(ctx context.Context, f store.UsageFilter, limit int) ([]store.TurnUsage, error) {
	where, args := usageWhere(f)
	q := `SELECT at, agent, instance, chat_id, sender, model, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
		cost_usd, duration_ns, outcome, estimate FROM usage` + where + ` ORDER BY at, id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := d.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	defer rows.Close()
	var out []store.TurnUsage
	for rows.Next() {
		var u store.TurnUsage
		var at, dur int64
		if err := rows.Scan(&at, &u.Agent, &u.Instance, &u.ChatID, &u.Sender, &u.Model, &u.InputTokens, &u.OutputTokens,
			&u.CacheReadTokens, &u.CacheCreationTokens, &u.CostUSD, &dur, &u.Outcome, &u.Estimate); err != nil {
			return nil, fmt.Errorf("list usage: %w", err)
		}
		u.At, u.Duration = time.Unix(0, at), time.Duration(dur)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	return out, nil
}
