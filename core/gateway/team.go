package gateway

import (
	"context"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/admission"
	"github.com/clawhost/clawhost/core/approval"
	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Rate is the per-sender flood limit (access.rate): N messages a window
// (Per); N 0: none.
type Rate = admission.Rate

// auditTrail appends to the audit trail.
type auditTrail struct {
	ctx   context.Context
	store store.Store
	log   hclog.Logger
}

// add appends e, logging a failure (an audit row the store cannot take
// does not stop what it records).
func (t auditTrail) add(e store.AuditEvent) {
	if err := t.store.Audit(t.ctx, e); err != nil && t.ctx.Err() == nil {
		t.log.Error("audit trail write failed", "kind", e.Kind, "subject", e.Subject, "error", err)
	}
}

// overBudget admits the turn b would start against the budgets, counting
// the turns running (budget.Admit: it may wait for room beside them):
// over one, the turn does not run and its messages are answered with the
// notice (recorded in the outbox like a reply); at warn_at the chat is
// warned once a period and the turn runs. done, when not nil, is called
// once the turn ended and its ledger row is written.
func (l lanes) overBudget(ctx context.Context, b *queue.Batch, key sessionkey.Key) (refused bool, done func()) {
	g := l.g
	set := g.settings()
	if !set.Budgets.Any() {
		return false, nil
	}
	var m message.Message
	if len(b.Messages) > 0 {
		m = b.Messages[0]
	} else if d, err := message.Decode(b.Entries[0].Message); err == nil {
		m = d
	} else {
		return false, nil // the turn fails it the same way
	}
	t := budget.Turn{Agent: key.Agent, Instance: m.Instance, ChatID: m.ChatID, Sender: turn.SenderOf(&m), Owner: m.Scheduled == "" && set.Access.IsOwner(&m)}
	v, done, err := g.budgets.Admit(ctx, t)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil // stopping: the turn's run is cut the same way
		}
		g.log.Error("budget check failed", "session", b.Key, "error", err)
	}
	now := g.opts.Now()
	switch {
	case v.Refused != nil:
		g.log.Info("turn refused by a budget", "session", b.Key, "budget", v.Refused.Key, "spent", v.Refused.Spent, "limit", v.Refused.USD)
		g.obs.Dropped(m.Instance, "budget")
		g.delivery.Deliver(delivery.Reply{Key: b.Key, ID: b.Entries[0].ID, Covers: b.Covers(), Target: m.Target(), Text: v.Refused.Refusal(now), Format: channel.FormatPlain})
		return true, nil
	case v.Warn != nil:
		// Before the turn's answer, in the session's order.
		g.delivery.Notify(b.Key, m.Target(), v.Warn.Warning(now))
	}
	return false, done
}

// tool records a tool-use decision: the tool, its input's digest
// and what the question showed of it, the decision and who made it — by
// their stable id ("<instance>:<id>", "admin"), as every other row names
// its actor; the display name the chat saw stays in the detail. A
// decision nobody made (a timeout, a session's rule) is the host's.
func (t auditTrail) tool(r approval.Record) {
	decision := "denied"
	switch {
	case r.Allow && r.Always:
		decision = "always allowed"
	case r.Allow:
		decision = "allowed"
	}
	summary := r.Summary
	if len(summary) > 200 {
		summary = strings.ToValidUTF8(summary[:200], "") + "…"
	}
	actor, detail := r.ByID, strings.TrimSpace(r.Digest+" "+summary)
	if actor == "" {
		actor = "host"
	}
	if r.By != "" && r.By != r.ByID {
		detail += " (by " + r.By + ")"
	}
	t.add(store.AuditEvent{Kind: store.AuditTool, Actor: actor, Instance: r.Chat.Instance, ChatID: r.Chat.ChatID, Subject: r.Tool,
		Decision: decision, Detail: detail})
}
