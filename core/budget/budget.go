// Package budget holds turns to the budgets of budget {} (and of agent
// blocks): what one sender's turns may cost a day, one chat's a day, one
// agent's a calendar month. A turn is checked when it would start, from
// the usage ledger (store.Ledger): over a budget it does not run, and the
// chat is told which budget, how much was spent and when it resets. A
// turn in flight is never cut.
//
// Turns that run at once (a burst of messages in several chats, a
// sender's turns in parallel sessions) are admitted against the same
// budget (Admit): each running turn reserves what the costliest turn of
// the budget's period cost, and a turn starts beside others only while
// the ledger and their reservations leave room for its own; otherwise it
// waits until one of them has ended (its cost is in the ledger then) and
// is checked again. With no turn running, a turn starts while the ledger
// is under the budget. So a budget is overshot by at most the cost of the
// last turn that started under it — unless turns running side by side
// each cost more than the costliest turn before them.
//
// At warn_at (default 80 %) the chat is warned once a period. Whether a
// warning was given is kept in the audit trail (store.AuditTrail, kind
// "budget", decision "warned"), so a restart or another host of a
// cluster does not warn again.
package budget

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
)

// Store is what budgets read and write.
type Store interface {
	SumUsage(ctx context.Context, f store.UsageFilter) (store.UsageSum, error)
	Audit(ctx context.Context, e store.AuditEvent) error
	ListAudit(ctx context.Context, f store.AuditFilter, limit int) ([]store.AuditEvent, error)
}

// Rules are the budgets in force: the top-level block and each agent's
// own (config.Agent.OwnBudget; nil: none).
type Rules struct {
	Top    *config.Budget
	Agents map[string]*config.Budget
}

// Any reports whether any budget is set.
func (r Rules) Any() bool {
	if r.Top.Any() {
		return true
	}
	for _, b := range r.Agents {
		if b.Any() {
			return true
		}
	}
	return false
}

// Scope is what a budget counts.
type Scope int

// Scopes.
const (
	PerSender Scope = iota
	PerChat
	PerAgent
)

// Limit is one budget as it applies to a turn.
type Limit struct {
	// Name is the attribute ("per_sender_daily_usd"); Where the block
	// that set it ("budget", or `agent "ops" budget`).
	Name, Where string
	Scope       Scope
	// Monthly: the period is a calendar month, else a day.
	Monthly bool
	USD     float64
	// Agent, when set, counts only that agent's turns.
	Agent string
}

// Turn is a turn about to start.
type Turn struct {
	Agent    string
	Instance string
	ChatID   string
	// Sender is "<instance>:<id>" (message.From).
	Sender string
	// Owner: the sender is an owner (exempt unless budget.owners).
	Owner bool
}

// Over is a budget a turn reached: how much was spent in the period and
// when the period ends.
type Over struct {
	Limit
	Spent  float64
	Since  time.Time
	Resets time.Time
	// Key names the budget and whom it counts ("per_sender_daily_usd
	// tg:5"); the audit trail's subject.
	Key string
}

// Verdict is a check's outcome: Refused, when set, keeps the turn from
// starting; Warn, when set, is a warning to give the chat now (the turn
// runs).
type Verdict struct {
	Refused *Over
	Warn    *Over
	// wait, when set, is closed when a running turn is released: t waits
	// for room beside the running ones (Admit).
	wait <-chan struct{}
}

// Budgets checks turns against the rules.
type Budgets struct {
	store Store
	clock tstime.Clock
	rules func() (Rules, *time.Location)
	// prices price the turns claude did not, from the top-level budget's
	// price blocks (Prices, SetPrices).
	prices *usage.Prices

	mu     sync.Mutex
	warned map[string]bool // Key + period start, given by this host
	// running are the admitted turns not yet released, with what each
	// reserves per budget (Over.Key); ended is closed and replaced when
	// one is released, gen counts releases.
	running map[*admitted]struct{}
	ended   chan struct{}
	gen     uint64
}

// admitted is a running turn's reservation.
type admitted struct {
	reserve map[string]float64
}

// New returns the budgets over st; rules returns the rules in force and
// the zone of days and months (nil: local), read at each check (a reload
// changes them).
func New(st Store, clock tstime.Clock, rules func() (Rules, *time.Location)) *Budgets {
	r, _ := rules()
	return &Budgets{store: st, clock: clock, rules: rules, prices: usage.NewPrices(r.prices()), warned: map[string]bool{}, running: map[*admitted]struct{}{}, ended: make(chan struct{})}
}

// Prices price the turns claude did not (a cut turn's tokens): the
// operator's price blocks over the known models' (turn.Options.Prices).
func (b *Budgets) Prices() *usage.Prices { return b.prices }

// SetPrices takes the price blocks of r (a reload).
func (b *Budgets) SetPrices(r Rules) { b.prices.SetConfigured(r.prices()) }

// prices is the operator's price table: the top-level budget's price
// blocks (nil: none).
func (r Rules) prices() map[string]usage.Price {
	if r.Top == nil || len(r.Top.Prices) == 0 {
		return nil
	}
	out := make(map[string]usage.Price, len(r.Top.Prices))
	for _, p := range r.Top.Prices {
		out[p.Model] = usage.Complete(p.Model, usage.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite})
	}
	return out
}

// Limits are the budgets that apply to t under r: an agent's own budget
// attribute replaces the top level's (and counts only its turns); an
// owner is exempt unless owners = true.
func (r Rules) Limits(t Turn) []Limit {
	own := r.Agents[t.Agent]
	eff := r.Top.Over(own)
	if t.Owner && !eff.HoldsOwners() {
		return nil
	}
	where := fmt.Sprintf("agent %q budget", t.Agent)
	var out []Limit
	add := func(name string, scope Scope, monthly bool, ownV, topV float64) {
		switch {
		case own != nil && ownV > 0:
			out = append(out, Limit{Name: name, Where: where, Scope: scope, Monthly: monthly, USD: ownV, Agent: t.Agent})
		case r.Top != nil && topV > 0:
			l := Limit{Name: name, Where: "budget", Scope: scope, Monthly: monthly, USD: topV}
			if scope == PerAgent {
				l.Agent = t.Agent
			}
			out = append(out, l)
		}
	}
	var o config.Budget
	if own != nil {
		o = *own
	}
	var top config.Budget
	if r.Top != nil {
		top = *r.Top
	}
	add("per_sender_daily_usd", PerSender, false, o.PerSenderDailyUSD, top.PerSenderDailyUSD)
	add("per_chat_daily_usd", PerChat, false, o.PerChatDailyUSD, top.PerChatDailyUSD)
	add("per_agent_monthly_usd", PerAgent, true, o.PerAgentMonthlyUSD, top.PerAgentMonthlyUSD)
	return out
}

// Period is the day (or month) in loc that holds now: its start and end.
func Period(now time.Time, loc *time.Location, monthly bool) (start, end time.Time) {
	if loc == nil {
		loc = time.Local
	}
	n := now.In(loc)
	if monthly {
		start = time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	return start, start.AddDate(0, 0, 1)
}

// Check checks the turn t would start, from the ledger alone (Admit
// counts the turns running too). A refusal and a warning are written to
// the audit trail. An error (the store) is returned with an empty
// verdict: the caller lets the turn run (a budget the host cannot read
// does not stop the agent; the error is logged).
func (b *Budgets) Check(ctx context.Context, t Turn) (Verdict, error) {
	v, _, err := b.check(ctx, t, false)
	return v, err
}

// Admit checks the turn t would start like Check, counting the admitted
// turns still running: when the budgets leave no room for t beside them,
// it waits until one of them is released and checks again (ctx ends the
// wait: the verdict is then empty and the error ctx's). A turn that may
// run is admitted: release, never nil then, is to be called once it has
// ended and its ledger row is written. A refused turn gets a nil release.
func (b *Budgets) Admit(ctx context.Context, t Turn) (v Verdict, release func(), err error) {
	for {
		v, a, err := b.check(ctx, t, true)
		switch {
		case a != nil:
			return v, b.releaser(a), err
		case v.Refused != nil:
			return v, nil, err
		case v.wait == nil:
			return v, func() {}, err // no budget applies, or the store failed
		}
		select {
		case <-v.wait:
		case <-ctx.Done():
			return Verdict{}, nil, ctx.Err()
		}
	}
}

// releaser is the release of a.
func (b *Budgets) releaser(a *admitted) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.running, a)
			b.gen++
			close(b.ended)
			b.ended = make(chan struct{})
			b.mu.Unlock()
		})
	}
}

// inFlight is what the admitted turns reserve under key and how many do.
// b.mu held.
func (b *Budgets) inFlight(key string) (usd float64, n int) {
	for a := range b.running {
		if r, ok := a.reserve[key]; ok {
			usd += r
			n++
		}
	}
	return usd, n
}

// check is Check; with admit, it counts the running turns, and a turn
// that may run is admitted (the returned reservation), or told to wait
// (Verdict.wait).
func (b *Budgets) check(ctx context.Context, t Turn, admit bool) (Verdict, *admitted, error) {
	rules, loc := b.rules()
	limits := rules.Limits(t)
	if len(limits) == 0 {
		return Verdict{}, nil, nil
	}
	warnAt := rules.Top.Over(rules.Agents[t.Agent]).Warn()
	now := b.clock.Now()
	b.mu.Lock()
	gen := b.gen
	b.mu.Unlock()
	overs := make([]*Over, 0, len(limits))
	maxes := make([]float64, 0, len(limits))
	for _, l := range limits {
		start, end := Period(now, loc, l.Monthly)
		f := store.UsageFilter{Since: start, Agent: l.Agent}
		key := l.Name + " "
		switch l.Scope {
		case PerSender:
			f.Sender, key = t.Sender, key+t.Sender
		case PerChat:
			f.Instance, f.ChatID, key = t.Instance, t.ChatID, key+t.Instance+":"+t.ChatID
		case PerAgent:
			key += t.Agent
		}
		if l.Agent != "" && l.Scope != PerAgent {
			key += " on " + l.Agent
		}
		sum, err := b.store.SumUsage(ctx, f)
		if err != nil {
			return Verdict{}, nil, fmt.Errorf("budget %s: %w", l.Name, err)
		}
		overs = append(overs, &Over{Limit: l, Spent: sum.CostUSD, Since: start, Resets: end, Key: key})
		maxes = append(maxes, sum.MaxUSD)
	}
	var v Verdict
	var a *admitted
	if admit {
		b.mu.Lock()
		if b.gen != gen {
			// A turn ended since the ledger was read: its row may be
			// missing from the sums and its reservation is gone. Again.
			b.mu.Unlock()
			return b.check(ctx, t, admit)
		}
		room := true
		for i, o := range overs {
			reserved, n := b.inFlight(o.Key)
			if n > 0 && (maxes[i] <= 0 || o.Spent+reserved+maxes[i] > o.USD) {
				room = false
			}
		}
		if !room {
			v.wait = b.ended
			b.mu.Unlock()
			return v, nil, nil
		}
		for _, o := range overs {
			if o.Spent >= o.USD {
				room = false
			}
		}
		if room {
			a = &admitted{reserve: map[string]float64{}}
			for i, o := range overs {
				a.reserve[o.Key] = maxes[i]
			}
			b.running[a] = struct{}{}
		}
		b.mu.Unlock()
	}
	for _, o := range overs {
		if o.Spent >= o.USD {
			v.Refused = o
			err := b.store.Audit(ctx, store.AuditEvent{Kind: store.AuditBudget, Actor: "host", Instance: t.Instance, ChatID: t.ChatID,
				Subject: o.Key, Decision: "refused", Detail: fmt.Sprintf("%s.%s: $%.2f spent of $%.2f; a turn of %s not run; resets %s",
					o.Where, o.Name, o.Spent, o.USD, t.Sender, o.Resets.Format(time.RFC3339))})
			return v, nil, err
		}
	}
	for _, o := range overs {
		if o.Spent < warnAt*o.USD {
			continue
		}
		warn, err := b.warnOnce(ctx, t, o)
		if err != nil || warn {
			if warn {
				v.Warn = o
			}
			return v, a, err
		}
	}
	return v, a, nil
}

// warnOnce reports whether o's warning is to be given now: not given yet
// this period, by this host or (the audit trail) any other or before a
// restart. It records it.
func (b *Budgets) warnOnce(ctx context.Context, t Turn, o *Over) (bool, error) {
	mark := o.Key + "@" + o.Since.Format(time.RFC3339)
	b.mu.Lock()
	given := b.warned[mark]
	b.warned[mark] = true
	b.mu.Unlock()
	if given {
		return false, nil
	}
	rows, err := b.store.ListAudit(ctx, store.AuditFilter{Kind: store.AuditBudget, Subject: o.Key, Since: o.Since}, 0)
	if err != nil {
		b.forget(mark)
		return false, err
	}
	for _, r := range rows {
		if r.Decision == "warned" {
			return false, nil
		}
	}
	if err := b.store.Audit(ctx, store.AuditEvent{Kind: store.AuditBudget, Actor: "host", Instance: t.Instance, ChatID: t.ChatID, Subject: o.Key,
		Decision: "warned", Detail: fmt.Sprintf("%s: $%.2f spent of $%.2f", o.Where+"."+o.Name, o.Spent, o.USD)}); err != nil {
		b.forget(mark)
		return false, err
	}
	return true, nil
}

func (b *Budgets) forget(mark string) {
	b.mu.Lock()
	delete(b.warned, mark)
	b.mu.Unlock()
}

// what names the budget for the chat.
func (o *Over) what() string {
	switch o.Scope {
	case PerSender:
		return "your daily budget"
	case PerChat:
		return "this chat's daily budget"
	}
	return fmt.Sprintf("agent %s's monthly budget", o.Agent)
}

// when says when o resets, in the chat's words.
func (o *Over) when(now time.Time) string {
	r := o.Resets
	switch {
	case o.Monthly:
		return r.Format("Mon 2 Jan 15:04 (MST)")
	case r.Sub(now) <= 24*time.Hour && r.YearDay() != now.In(r.Location()).YearDay():
		return r.Format("15:04 (MST)") + " tomorrow"
	}
	return r.Format("Mon 15:04 (MST)")
}

// Refusal is the notice a refused turn's chat gets.
func (o *Over) Refusal(now time.Time) string {
	return fmt.Sprintf("Not run: %s is spent — $%.2f of $%.2f (%s.%s). It resets at %s; an owner can raise it in the configuration.",
		o.what(), o.Spent, o.USD, o.Where, o.Name, o.when(now))
}

// Warning is the notice of a warning.
func (o *Over) Warning(now time.Time) string {
	return fmt.Sprintf("Budget: %s is %.0f %% used — $%.2f of $%.2f (%s.%s). It resets at %s.",
		o.what(), 100*o.Spent/o.USD, o.Spent, o.USD, o.Where, o.Name, o.when(now))
}
