// Package pairing is the one implementation of the pairing lifecycle
// (API): pending codes, approvals, the approved senders and their
// revocation, for the admin endpoint, the pairing subcommand when
// clawhost is not running, and /revoke.
package pairing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/core/store"
)

// API is the one implementation of the pairing lifecycle: it serves
// the admin endpoint (list, approve, list approved, revoke), the pairing
// subcommand when clawhost is not running, and /revoke ([API.Revoker]).
type API struct {
	// DB holds the codes and approvals.
	DB store.Pairing
	// By is recorded as the approver of codes approved through this API
	// ("admin", "cli").
	By string
	// Policy returns the access policy in force (its lists, pairing_ttl,
	// dm_policy); nil: approvals are listed as they are stored.
	Policy func() access.Policy
	// Schedules drops a revoked sender's schedules; nil: none are kept.
	Schedules SenderSchedules
	// Log records revocations; nil: not logged.
	Log hclog.Logger
	// Trail records approvals, refused approvals and revocations in the
	// audit trail; nil: not recorded.
	Trail store.AuditTrail
	// OnApproved, when not nil, is called with each sender approved (the
	// running host tells them and answers the message the pairing held).
	OnApproved func(ctx context.Context, entry string)
}

// audit appends e to the audit trail, if there is one; a failure is
// logged (the decision it records stands).
func (p API) audit(ctx context.Context, e store.AuditEvent) {
	if p.Trail == nil {
		return
	}
	if err := p.Trail.Audit(ctx, e); err != nil && p.Log != nil {
		p.Log.Error("audit trail write failed", "kind", e.Kind, "error", err)
	}
}

// SenderSchedules drops the schedules that belong to one sender.
type SenderSchedules interface {
	// DropSender removes the schedules added from chat that run in the
	// direct chat of entry ("<instance>:<sender id>") and returns how many.
	DropSender(ctx context.Context, entry string) (int, error)
}

// PendingPairings lists the pending codes of every instance.
func (p API) PendingPairings(ctx context.Context) ([]admin.PairingCode, error) {
	codes, err := p.DB.PendingPairings(ctx, "")
	out := make([]admin.PairingCode, len(codes))
	for i, c := range codes {
		out[i] = admin.PairingCode{Instance: c.Instance, SenderID: c.SenderID, SenderName: c.SenderName, SenderUsername: c.SenderUsername, Code: c.Code, CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt}
	}
	return out, err
}

// ApprovePairing approves a code and returns the sender's allow_from entry.
func (p API) ApprovePairing(ctx context.Context, code string) (string, error) {
	s, err := p.DB.ApprovePairing(ctx, store.ApproveRequest{Code: code, By: p.By})
	if err != nil {
		p.audit(ctx, store.AuditEvent{Kind: store.AuditPairing, Actor: p.By, Decision: "refused", Detail: "approve: " + err.Error()})
	} else {
		p.audit(ctx, store.AuditEvent{Kind: store.AuditPairing, Actor: p.By, Instance: s.Instance, Subject: s.Entry(), Decision: "approved"})
		if p.OnApproved != nil {
			go p.OnApproved(context.WithoutCancel(ctx), s.Entry())
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", admin.ErrNotFound
	case errors.Is(err, store.ErrExpired):
		return "", admin.ErrExpired
	case errors.Is(err, store.ErrTooManyAttempts):
		return "", admin.ErrTooManyAttempts
	case err != nil:
		return "", err
	}
	return s.Entry(), nil
}

// ApprovedSenders lists the approved senders with when and by whom, and
// whether each approval admits its sender now (pairing_ttl, dm_policy).
func (p API) ApprovedSenders(ctx context.Context) ([]admin.ApprovedSender, error) {
	list, err := p.DB.ApprovedSenders(ctx, "")
	if err != nil {
		return nil, err
	}
	var pol access.Policy
	if p.Policy != nil {
		pol = p.Policy()
	}
	now := time.Now()
	out := make([]admin.ApprovedSender, len(list))
	for i, a := range list {
		s := admin.ApprovedSender{Entry: a.Entry(), ApprovedAt: a.ApprovedAt, ApprovedBy: a.ApprovedBy, Honoured: pol.DMPolicy != access.PolicyAllowlist}
		if pol.PairingTTL > 0 {
			s.ExpiresAt = a.ApprovedAt.Add(pol.PairingTTL)
			s.Honoured = s.Honoured && now.Before(s.ExpiresAt)
		}
		out[i] = s
	}
	return out, nil
}

// RevokeSender withdraws entry's approval and drops their schedules.
func (p API) RevokeSender(ctx context.Context, entry string) (admin.Revocation, error) {
	r, err := p.revoke(ctx, entry, p.By)
	return admin.Revocation{Entry: entry, Found: r.Found, Schedules: r.Schedules, Listed: r.Listed}, err
}

// Revoker is p as /revoke's port.
func (p API) Revoker() command.Revoker { return revoker{p} }

type revoker struct{ p API }

func (r revoker) Revoke(ctx context.Context, entry, by string) (command.Revocation, error) {
	return r.p.revoke(ctx, entry, by)
}

// revoke is the revocation: the approval (and a pending code) leaves the
// store, then the sender's schedules their chat. The store comes first: a
// failure after it leaves schedules that no longer reach an admitted
// sender's chat, never an admitted sender without them.
func (p API) revoke(ctx context.Context, entry, by string) (command.Revocation, error) {
	instance, id, ok := config.SplitEntry(strings.TrimSpace(entry))
	if !ok || strings.ContainsAny(id, " \t\n") {
		return command.Revocation{}, fmt.Errorf("revoke %q: %w", entry, admin.ErrBadEntry)
	}
	entry = instance + ":" + id
	found, err := p.DB.RevokeApproval(ctx, instance, id)
	if err != nil {
		return command.Revocation{}, err
	}
	decision := "revoked"
	if !found {
		decision = "not approved"
	}
	p.audit(ctx, store.AuditEvent{Kind: store.AuditRevoke, Actor: by, Instance: instance, Subject: entry, Decision: decision})
	r := command.Revocation{Found: found}
	if p.Schedules != nil {
		if r.Schedules, err = p.Schedules.DropSender(ctx, entry); err != nil {
			return r, fmt.Errorf("drop the schedules of %s: %w", entry, err)
		}
	}
	if p.Policy != nil {
		pol := p.Policy()
		if slices.Contains(pol.Owners, entry) {
			r.Listed = append(r.Listed, "owners")
		}
		if slices.Contains(pol.AllowFrom, entry) {
			r.Listed = append(r.Listed, "allow_from")
		}
	}
	if p.Log != nil {
		p.Log.Info("pairing approval revoked", "sender", entry, "by", by, "was_approved", found, "schedules_dropped", r.Schedules)
	}
	return r, nil
}

// AccessPolicy returns cfg's access policy, for a [API] used while
// clawhost is not running.
func AccessPolicy(cfg *config.Config) func() access.Policy {
	return func() access.Policy {
		set, _ := settings.Pipeline(cfg) // a loaded configuration maps
		return set.Access
	}
}

// DenyPairing drops the pending request of code (the sender may ask again
// later); false when no pending request has that code.
func (p API) DenyPairing(ctx context.Context, code string) (bool, error) {
	pending, err := p.DB.PendingPairings(ctx, "")
	if err != nil {
		return false, err
	}
	for _, c := range pending {
		if !strings.EqualFold(c.Code, strings.TrimSpace(code)) {
			continue
		}
		if _, err := p.DB.RevokeApproval(ctx, c.Instance, c.SenderID); err != nil {
			return false, err
		}
		p.audit(ctx, store.AuditEvent{Kind: store.AuditPairing, Actor: p.By, Instance: c.Instance, Subject: c.Instance + ":" + c.SenderID, Decision: "denied"})
		return true, nil
	}
	return false, nil
}
