package postgres

import (
	"context"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// SumUsage implements [store.Ledger].
func (d *DB) SumUsage(ctx context.Context, f store.UsageFilter) (store.UsageSum, error) {
	where, args := tables.UsageWhere(f)
	var s store.UsageSum
	err := d.reader(ctx).Scan(`SELECT count(*), coalesce(sum(input_tokens), 0)::bigint, coalesce(sum(output_tokens), 0)::bigint,
		coalesce(sum(cache_read_tokens), 0)::bigint, coalesce(sum(cache_creation_tokens), 0)::bigint, coalesce(sum(cost_usd), 0),
		count(*) FILTER (WHERE estimate), coalesce(sum(cost_usd) FILTER (WHERE estimate), 0), coalesce(max(cost_usd), 0) FROM usage`+where, args,
		&s.Turns, &s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheCreationTokens, &s.CostUSD, &s.Estimates, &s.EstimatedUSD, &s.MaxUSD)
	if err != nil {
		return s, fmt.Errorf("sum usage: %w", err)
	}
	return s, nil
}
