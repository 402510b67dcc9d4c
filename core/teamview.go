package core

import (
	"context"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
)

// statusAuditRows is how many audit rows the status page shows.
const statusAuditRows = 30

// teamView is the status page's usage sums (7 days by day, 30 days by
// person and agent) and latest audit rows, read from the store; what
// cannot be read is left out (the error log has it).
func (h *Host) teamView(ctx context.Context) (*admin.Usage, []admin.AuditEntry) {
	loc := h.cfg.Messages.Location()
	w := usage.Windows(time.Now(), loc)
	var u *admin.Usage
	if rows, err := h.db.ListUsage(ctx, store.UsageFilter{Since: w[2]}, 0); err != nil {
		h.log.Warn("status page: reading the usage ledger failed", "error", err)
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
	events, err := h.db.ListAudit(ctx, store.AuditFilter{}, statusAuditRows)
	if err != nil {
		h.log.Warn("status page: reading the audit trail failed", "error", err)
	}
	return u, auditEntries(events)
}

func usageRows(rows []usage.Row) []admin.UsageRow {
	out := make([]admin.UsageRow, len(rows))
	for i, r := range rows {
		out[i] = admin.UsageRow{Key: r.Key, Turns: r.Turns, CostUSD: r.CostUSD, InputTokens: r.InputTokens + r.CacheReadTokens + r.CacheCreationTokens, OutputTokens: r.OutputTokens}
	}
	return out
}

func auditEntries(events []store.AuditEvent) []admin.AuditEntry {
	out := make([]admin.AuditEntry, len(events))
	for i, e := range events {
		chat := ""
		if e.ChatID != "" {
			chat = e.Instance + ":" + e.ChatID
		}
		out[i] = admin.AuditEntry{At: e.At, Kind: e.Kind, Actor: e.Actor, Chat: chat, Subject: e.Subject, Decision: e.Decision, Detail: e.Detail}
	}
	return out
}
