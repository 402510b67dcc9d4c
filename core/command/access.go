package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
)

// The access group: who the sender is, pairing approvals and their
// withdrawal.
var (
	cmdWhoami = &builtin{name: "whoami", help: "your id, as access.allow_from wants it",
		run: func(_ *Handler, c call) string { return fmt.Sprintf("You are %s.", c.m.From) }}
	cmdApprove = &builtin{name: "approve", help: "approve a pairing code (owners)", needs: owner,
		run: func(h *Handler, c call) string { return h.approve(c.ctx, c.m, c.args) }}
	cmdDeny = &builtin{name: "deny", help: "refuse a pairing code (owners)", needs: owner,
		run: func(h *Handler, c call) string { return h.deny(c.ctx, c.m, strings.TrimSpace(c.args)) }}
	cmdRevoke = &builtin{name: "revoke", help: "withdraw a pairing approval and drop that sender's schedules: /revoke tg:ID (owners)", needs: owner,
		run: func(h *Handler, c call) string { return h.revoke(c.ctx, c.m, strings.TrimSpace(c.args)) }}
)

// Revoker withdraws a sender's approval through pairing; the host
// implements it (the store, and the sender's schedules).
type Revoker interface {
	// Revoke revokes entry ("<instance>:<sender id>"); by is who asked,
	// for the log.
	Revoke(ctx context.Context, entry, by string) (Revocation, error)
}

// Revocation is what a revocation did.
type Revocation struct {
	// Found: the sender had been approved through pairing.
	Found bool
	// Schedules counts the sender's schedules dropped.
	Schedules int
	// Listed names the configuration lists (owners, allow_from) that
	// still admit the sender: revoking a pairing does not change the file.
	Listed []string
}

func (h *Handler) approve(ctx context.Context, m *message.Message, code string) string {
	if code == "" {
		return "Usage: /approve CODE"
	}
	s, err := h.Store.ApprovePairing(ctx, store.ApproveRequest{Code: code, By: m.From})
	ev := store.AuditEvent{Kind: store.AuditPairing, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: s.Entry(), Decision: "approved", Detail: "/approve"}
	if err != nil {
		ev.Subject, ev.Decision, ev.Detail = "", "refused", "/approve: "+err.Error()
	}
	h.audit(ctx, ev)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "Unknown pairing code."
	case errors.Is(err, store.ErrExpired):
		return "That pairing code expired."
	case errors.Is(err, store.ErrTooManyAttempts):
		return "Too many wrong pairing codes were tried recently; pending codes were voided and approvals are paused for a few minutes."
	case err != nil:
		h.Logger.Error("approve failed", "error", err)
		return "Approval failed; see the gateway log."
	}
	h.Logger.Info("pairing approved", "sender", s.Entry(), "by", m.From)
	if h.OnApproved != nil {
		// The sender is told and their held message answered, after
		// this answer.
		entry := s.Entry()
		go h.OnApproved(context.WithoutCancel(ctx), entry)
	}
	return fmt.Sprintf("Approved %s.", s.Entry())
}

// deny answers /deny CODE: the pending request is dropped (the sender may
// ask again later and gets a new code); the sender is not told.
func (h *Handler) deny(ctx context.Context, m *message.Message, code string) string {
	if code == "" {
		return "Usage: /deny CODE"
	}
	pending, err := h.Store.PendingPairings(ctx, "")
	if err != nil {
		h.Logger.Error("deny: listing the pending pairings failed", "error", err)
		return "Denying failed; see the gateway log."
	}
	for _, p := range pending {
		if !strings.EqualFold(p.Code, code) {
			continue
		}
		if _, err := h.Store.RevokeApproval(ctx, p.Instance, p.SenderID); err != nil {
			h.Logger.Error("deny failed", "error", err)
			return "Denying failed; see the gateway log."
		}
		entry := p.Instance + ":" + p.SenderID
		h.audit(ctx, store.AuditEvent{Kind: store.AuditPairing, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: entry, Decision: "denied", Detail: "/deny"})
		h.Logger.Info("pairing denied", "sender", entry, "by", m.From)
		return fmt.Sprintf("Denied %s: the request is dropped (they may ask again later).", entry)
	}
	return "Unknown pairing code (or it expired)."
}

// revoke answers /revoke <instance:id>: the sender's approval through
// pairing is withdrawn (they are asked to pair again) and their schedules
// dropped.
func (h *Handler) revoke(ctx context.Context, m *message.Message, entry string) string {
	instance, id, ok := strings.Cut(entry, ":")
	if !ok || instance == "" || id == "" || strings.ContainsAny(entry, " \t\n") {
		return "Usage: /revoke INSTANCE:ID (the sender's id as /whoami shows it, e.g. /revoke tg:123456789)"
	}
	if h.Revoker == nil {
		return "Revoking is not available."
	}
	r, err := h.Revoker.Revoke(ctx, entry, m.From)
	if err != nil {
		h.Logger.Error("revoke failed", "sender", entry, "error", err)
		return "Revoking failed; see the gateway log."
	}
	var b strings.Builder
	if r.Found {
		fmt.Fprintf(&b, "Revoked %s: they will be asked to pair again.", entry)
	} else {
		fmt.Fprintf(&b, "%s was not approved through pairing.", entry)
	}
	if r.Schedules > 0 {
		fmt.Fprintf(&b, " %d of their schedule(s) dropped.", r.Schedules)
	}
	if len(r.Listed) > 0 {
		fmt.Fprintf(&b, " They are still admitted by access.%s in the configuration file.", strings.Join(r.Listed, " and access."))
	}
	return b.String()
}
