package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultWarnAt is budget.warn_at when unset: a warning at 80 % of a
// budget.
const DefaultWarnAt = 0.8

// Budget is a budget {} block — at the top level for every agent, or
// inside an agent block for that agent's turns (each attribute set there
// replaces the top level's). Amounts are US dollars of the usage ledger:
// each turn's own cost as claude reports it, a stopped or timed-out turn's
// tokens at their model's price; unset or 0: no such budget. Days and
// months are those of messages.timezone (the host's zone when unset).
//
// A turn is checked when it would start, counting the turns of the same
// sender, chat or agent still running: over a budget, it does not run
// and its message is answered with which budget, the amount and when it
// resets. A turn in flight is never cut, so a budget can be overshot by
// about one turn's cost (docs/team.md says by how much exactly).
type Budget struct {
	// PerSenderDailyUSD caps what one sender's turns cost a day
	// (per_sender_daily_usd). At the top level it counts every agent; in
	// an agent block, that agent's turns.
	PerSenderDailyUSD float64 `hcl:"per_sender_daily_usd,optional"`
	// PerChatDailyUSD caps what one chat's turns cost a day
	// (per_chat_daily_usd), whoever sent them.
	PerChatDailyUSD float64 `hcl:"per_chat_daily_usd,optional"`
	// PerAgentMonthlyUSD caps what each agent's turns cost a calendar
	// month (per_agent_monthly_usd).
	PerAgentMonthlyUSD float64 `hcl:"per_agent_monthly_usd,optional"`
	// WarnAt is when the chat is warned, once a period: a fraction ("0.8")
	// or a percentage ("80%") of the budget (warn_at). Default 80 %.
	WarnAt string `hcl:"warn_at,optional"`
	// Owners: owners are held to the budgets too (owners). Default false:
	// owners are exempt.
	Owners *bool `hcl:"owners,optional"`
	// Prices are what a model's tokens cost, for the turns claude did not
	// price: one stopped (/stop) or timed out before its result (price
	// "<model>" { … }; top-level budget block only). Without one, such a
	// turn is priced as the model's last completed turn was, else at the
	// built-in list prices (docs/team.md).
	Prices []*Price `hcl:"price,block"`
}

// Price is a price "<model>" {} block: US dollars per million tokens of
// the model. Unset output and cache prices follow the input price in the
// proportions claude charges the model at (claude-opus-5-5: output 5 ×
// input, cache reads 0.05 ×, cache writes 1.25 ×), else Anthropic's list
// structure: output 5 ×, cache reads 0.1 ×, cache writes 1.25 ×.
type Price struct {
	// Model is the model's name as claude reports it ("claude-opus-5-5").
	Model string `hcl:"model,label"`
	// Input is the price of a million input tokens (input), in US dollars.
	Input float64 `hcl:"input"`
	// Output is the price of a million output tokens (output).
	Output float64 `hcl:"output,optional"`
	// CacheRead is the price of a million tokens read from the prompt
	// cache (cache_read).
	CacheRead float64 `hcl:"cache_read,optional"`
	// CacheWrite is the price of a million tokens written to the prompt
	// cache (cache_write).
	CacheWrite float64 `hcl:"cache_write,optional"`
}

// Warn is WarnAt as a fraction of the budget (DefaultWarnAt when unset or
// invalid; Load refuses invalid values).
func (b *Budget) Warn() float64 {
	if b == nil || b.WarnAt == "" {
		return DefaultWarnAt
	}
	f, err := parseWarnAt(b.WarnAt)
	if err != nil {
		return DefaultWarnAt
	}
	return f
}

// HoldsOwners reports budget.owners.
func (b *Budget) HoldsOwners() bool { return b != nil && b.Owners != nil && *b.Owners }

// Over returns b with what o sets replacing b's: an agent's budget block
// over the top level's.
func (b *Budget) Over(o *Budget) *Budget {
	var n Budget
	if b != nil {
		n = *b
	}
	if o == nil {
		return &n
	}
	if o.PerSenderDailyUSD != 0 {
		n.PerSenderDailyUSD = o.PerSenderDailyUSD
	}
	if o.PerChatDailyUSD != 0 {
		n.PerChatDailyUSD = o.PerChatDailyUSD
	}
	if o.PerAgentMonthlyUSD != 0 {
		n.PerAgentMonthlyUSD = o.PerAgentMonthlyUSD
	}
	if o.WarnAt != "" {
		n.WarnAt = o.WarnAt
	}
	if o.Owners != nil {
		n.Owners = o.Owners
	}
	if len(o.Prices) > 0 {
		n.Prices = o.Prices
	}
	return &n
}

// Any reports whether b sets a budget.
func (b *Budget) Any() bool {
	return b != nil && (b.PerSenderDailyUSD > 0 || b.PerChatDailyUSD > 0 || b.PerAgentMonthlyUSD > 0)
}

func parseWarnAt(s string) (float64, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil {
		return 0, err
	}
	if pct || v > 1 {
		v /= 100
	}
	if v <= 0 || v > 1 {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}

func (b *Budget) check(k *checker) {
	for _, a := range []struct {
		name string
		v    float64
	}{{"per_sender_daily_usd", b.PerSenderDailyUSD}, {"per_chat_daily_usd", b.PerChatDailyUSD}, {"per_agent_monthly_usd", b.PerAgentMonthlyUSD}} {
		if a.v < 0 {
			k.errorf(k.valueRange(a.name), "Invalid value for "+k.qualified(a.name),
				"A budget is an amount in US dollars, 0 or more (0: none), not %g.", a.v)
		}
	}
	if b.WarnAt != "" {
		if _, err := parseWarnAt(b.WarnAt); err != nil {
			k.errorf(k.valueRange("warn_at"), "Invalid value for "+k.qualified("warn_at"),
				"%q is not a share of the budget: write a fraction such as 0.8 or a percentage such as \"80%%\" (above 0, at most 100 %%).", b.WarnAt)
		}
	}
	seen := map[string]bool{}
	bodies := k.blocks("price", "model")
	for i, p := range b.Prices {
		pk := k.subAt(bodies, i, fmt.Sprintf("budget price %q", p.Model))
		if seen[p.Model] {
			pk.errorf(pk.valueRange("input"), "Duplicate price", "The price of %q is set twice.", p.Model)
		}
		seen[p.Model] = true
		for _, a := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if a.v < 0 || (a.name == "input" && a.v == 0) {
				pk.errorf(pk.valueRange(a.name), "Invalid value for "+pk.qualified(a.name),
					"A price is US dollars per million tokens, above 0 (output and the cache prices may be left out), not %g.", a.v)
			}
		}
	}
}

// Rate is a flood limit written "<count>/<unit>": "20/min", "5/s",
// "300/hour" (access.rate).
type Rate string

// Parse returns the count and the window; ok false when r is empty or
// does not parse.
func (r Rate) Parse() (n int, per time.Duration, ok bool) {
	count, unit, found := strings.Cut(strings.TrimSpace(string(r)), "/")
	if !found {
		return 0, 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "s", "sec", "second":
		per = time.Second
	case "m", "min", "minute":
		per = time.Minute
	case "h", "hour":
		per = time.Hour
	case "d", "day":
		per = 24 * time.Hour
	default:
		return 0, 0, false
	}
	return n, per, true
}

func (k *checker) rate(name string, r Rate) {
	if r == "" {
		return
	}
	if _, _, ok := r.Parse(); !ok {
		k.errorf(k.valueRange(name), "Invalid value for "+k.qualified(name),
			"%q is not a rate: write a count of messages per second, minute, hour or day, such as \"20/min\".", string(r))
	}
}

// DefaultAuditKeep is audit.keep when unset.
const DefaultAuditKeep = Duration("90d")

// Audit is the audit {} block: how long the audit trail keeps its rows.
type Audit struct {
	// Keep is how long a row is kept (keep), e.g. "90d" (the default).
	Keep Duration `hcl:"keep,optional"`
}

func defaultAudit() *Audit { return &Audit{Keep: DefaultAuditKeep} }

func (a *Audit) check(k *checker) { k.duration("keep", a.Keep) }
