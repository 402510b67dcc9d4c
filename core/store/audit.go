package store

import (
	"context"
	"time"
)

// Kinds of audit events ([AuditEvent.Kind]).
const (
	// AuditPairing: an owner approved or refused a pairing code (by
	// /approve, `clawhost pairing approve|deny` or the status page).
	AuditPairing = "pairing"
	// AuditRevoke: an approved sender was revoked.
	AuditRevoke = "revoke"
	// AuditTool: a tool-use question was answered (or timed out).
	AuditTool = "tool"
	// AuditCommand: a role-gated command was used or refused.
	AuditCommand = "command"
	// AuditBudget: a turn was refused by a budget, or a budget's warning
	// was given.
	AuditBudget = "budget"
	// AuditRate: a sender went over the flood limit (access.rate).
	AuditRate = "rate"
	// AuditReload: the configuration was reloaded, or a reload refused.
	AuditReload = "reload"
	// AuditPluginTool: the agent called a plugin's tool (Subject
	// "<instance>.<tool>"; Decision ok, error, timeout or refused).
	AuditPluginTool = "plugin_tool"
	// AuditOwnerSession: an owner's own claude session was listed,
	// continued (forked or taken over) or handed back to the terminal
	// (/continue, /desktop; Subject the session id, Detail the file).
	AuditOwnerSession = "owner_session"
	// AuditAttach: a terminal claude attached to an owner's chat, left it,
	// was detached (/detach) or refused (Subject the chat; Decision
	// attach, detach, fallback or refused).
	AuditAttach = "attach"
	// AuditInvite: an invitation of the bot to a room was declined
	// (Actor the inviter, ChatID the room, Decision "declined", Detail
	// why).
	AuditInvite = "invite"
)

// AuditEvent is one row of the audit trail: a decision about who may do
// what, kept for audit { keep }.
type AuditEvent struct {
	// ID is set by the store (ascending); At is when it happened (zero:
	// now).
	ID int64
	At time.Time
	// Kind is one of the Audit* kinds.
	Kind string
	// Actor is who decided or acted: "<instance>:<sender id>", "cli",
	// "admin", "host" (the host itself: a timeout, a budget).
	Actor string
	// Instance and ChatID are the chat it happened in ("" none).
	Instance string
	ChatID   string
	// Subject is what it was about: the sender approved, the tool, the
	// command, the budget.
	Subject string
	// Decision is the outcome: "approved", "denied", "allowed",
	// "refused", "warned", "timeout", "applied", …
	Decision string
	// Detail is free text: an input's digest, an amount, a reason.
	Detail string
}

// AuditFilter selects audit rows: At in [Since, Until) (zero: open), and
// the fields set.
type AuditFilter struct {
	Since, Until time.Time
	Kind         string
	Subject      string
	ChatID       string
}

// Matches reports whether f selects e.
func (f AuditFilter) Matches(e AuditEvent) bool {
	switch {
	case !f.Since.IsZero() && e.At.Before(f.Since):
		return false
	case !f.Until.IsZero() && !e.At.Before(f.Until):
		return false
	case f.Kind != "" && e.Kind != f.Kind:
		return false
	case f.Subject != "" && e.Subject != f.Subject:
		return false
	case f.ChatID != "" && e.ChatID != f.ChatID:
		return false
	}
	return true
}

// AuditTrail is the audit trail.
type AuditTrail interface {
	// Audit appends e (its ID and, when zero, At are set by the store).
	Audit(ctx context.Context, e AuditEvent) error
	// ListAudit returns the rows f selects, newest first, up to limit
	// (≤ 0: all).
	ListAudit(ctx context.Context, f AuditFilter, limit int) ([]AuditEvent, error)
	// PruneAudit deletes the rows older than before and says how many.
	PruneAudit(ctx context.Context, before time.Time) (int, error)
}
