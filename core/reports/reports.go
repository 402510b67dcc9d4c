// Package reports serves the store's usage ledger and audit trail the way
// the admin endpoint shows them (the status page's team view, /usage.json,
// /audit.json), and maps the admin endpoint's rows back (clawhost team).
package reports

import (
	"context"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
	"github.com/hashicorp/go-hclog"
)

// statusAuditRows is how many audit rows the status page shows.
const statusAuditRows = 30

// TeamView is the status page's usage sums (7 days by day, 30 days by
// person and agent) and latest audit rows, read from the store; what
// cannot be read is left out (the error log has it).
func TeamView(ctx context.Context, db store.Store, loc *time.Location, log hclog.Logger) (*admin.Usage, []admin.AuditEntry) {
	w := usage.Windows(time.Now(), loc)
	var u *admin.Usage
	if rows, err := db.ListUsage(ctx, store.UsageFilter{Since: w[2]}, 0); err != nil {
		log.Warn("status page: reading the usage ledger failed", "error", err)
	} else if len(rows) > 0 {
		u = &admin.Usage{}
		var week []store.TurnUsage
		for _, r := range rows {
			if !r.At.Before(w[1]) {
				week = append(week, r)
			}
		}
		u.Days = usageRows(usage.Group(week, usage.ByDay, loc))
		u.People = usageRows(usage.Group(rows, usage.ByPerson, loc))
		u.Agents = usageRows(usage.Group(rows, usage.ByAgent, loc))
	}
	events, err := db.ListAudit(ctx, store.AuditFilter{}, statusAuditRows)
	if err != nil {
		log.Warn("status page: reading the audit trail failed", "error", err)
	}
	return u, AuditEntries(events)
}

func usageRows(rows []usage.Row) []admin.UsageRow {
	out := make([]admin.UsageRow, len(rows))
	for i, r := range rows {
		out[i] = admin.UsageRow{Key: r.Key, Turns: r.Turns, CostUSD: r.CostUSD, InputTokens: r.InputTokens + r.CacheReadTokens + r.CacheCreationTokens, OutputTokens: r.OutputTokens,
			EstimatedUSD: r.EstimatedUSD}
	}
	return out
}

// AuditEntries are audit rows as the admin endpoint serves them.
func AuditEntries(events []store.AuditEvent) []admin.AuditEntry {
	out := make([]admin.AuditEntry, len(events))
	for i, e := range events {
		chat := ""
		if e.ChatID != "" {
			chat = e.Instance + ":" + e.ChatID
		}
		out[i] = admin.AuditEntry{At: e.At, Kind: e.Kind, Actor: e.Actor, Instance: e.Instance, ChatID: e.ChatID, Chat: chat, Subject: e.Subject, Decision: e.Decision, Detail: e.Detail}
	}
	return out
}

// Reports serves the admin endpoint's /usage.json and /audit.json from
// the store.
type Reports struct{ DB store.Store }

func (r Reports) Usage(ctx context.Context, since time.Time) ([]admin.UsageRecord, error) {
	rows, err := r.DB.ListUsage(ctx, store.UsageFilter{Since: since}, 0)
	out := make([]admin.UsageRecord, len(rows))
	for i, u := range rows {
		out[i] = usageRecord(u)
	}
	return out, err
}

func (r Reports) Audit(ctx context.Context, since time.Time, kind string) ([]admin.AuditEntry, error) {
	rows, err := r.DB.ListAudit(ctx, store.AuditFilter{Since: since, Kind: kind}, 0)
	return AuditEntries(rows), err
}

// usageRecord is a ledger row as the admin endpoint serves it.
func usageRecord(u store.TurnUsage) admin.UsageRecord {
	return admin.UsageRecord{At: u.At, Agent: u.Agent, Instance: u.Instance, ChatID: u.ChatID, Sender: u.Sender, Model: u.Model,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheCreationTokens: u.CacheCreationTokens,
		CostUSD: u.CostUSD, Estimate: u.Estimate, DurationMS: u.Duration.Milliseconds(), Outcome: u.Outcome}
}

// TurnUsage is a ledger row read back from the admin endpoint.
func TurnUsage(r admin.UsageRecord) store.TurnUsage {
	return store.TurnUsage{At: r.At, Agent: r.Agent, Instance: r.Instance, ChatID: r.ChatID, Sender: r.Sender, Model: r.Model,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CacheReadTokens: r.CacheReadTokens, CacheCreationTokens: r.CacheCreationTokens,
		CostUSD: r.CostUSD, Estimate: r.Estimate, Duration: time.Duration(r.DurationMS) * time.Millisecond, Outcome: r.Outcome}
}

// Budgets are the budgets of cfg as the operator's page draws them: the
// top-level block's, then each agent block's own.
func Budgets(cfg *config.Config) []admin.Budget {
	var out []admin.Budget
	add := func(agent string, b *config.Budget) {
		if !b.Any() {
			return
		}
		var exempt []string
		if !cfg.Budget.Over(b).HoldsOwners() {
			exempt = cfg.Access.Owners
		}
		for _, l := range []struct {
			scope string
			usd   float64
		}{{"person", b.PerSenderDailyUSD}, {"chat", b.PerChatDailyUSD}, {"agent", b.PerAgentMonthlyUSD}} {
			if l.usd > 0 {
				out = append(out, admin.Budget{Scope: l.scope, Agent: agent, LimitUSD: l.usd, WarnAt: b.Warn(), Exempt: exempt})
			}
		}
	}
	add("", cfg.Budget)
	for _, a := range cfg.AllAgents() {
		add(a.ID, a.OwnBudget())
	}
	return out
}

// Sessions are the stored sessions with a claude session, the most
// recently used first, as /sessions.json serves them.
func (r Reports) Sessions(ctx context.Context) ([]admin.SessionRow, error) {
	rows, err := r.DB.RecentSessions(ctx, 0)
	if err != nil {
		return nil, err
	}
	return SessionRows(rows), nil
}

// SessionRows are the sessions of rows that have a claude session, as
// admin rows (their /name decoded from the chat metadata).
func SessionRows(rows []store.Session) []admin.SessionRow {
	var out []admin.SessionRow
	cache := session.NewCache(0)
	for _, s := range rows {
		if s.ClaudeSessionID == "" {
			continue
		}
		meta, _ := cache.Decode(s.Key, s.Chat)
		out = append(out, admin.SessionRow{Key: s.Key, ClaudeSessionID: s.ClaudeSessionID, Turns: s.Turns, Last: s.LastMessageAt, Name: meta.Name})
	}
	return out
}
