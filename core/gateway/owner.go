package gateway

import (
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/store"
)

// OwnerClaims checks "/owner CODE" against the one-time owner code `clawhost
// init` made; *ownerclaim.Claims implements it. Claim is called from the
// arrival stage (it may block on a small file); on ownerclaim.Claimed the
// sender is an owner from then on (persisted by the implementation).
type OwnerClaims interface {
	Claim(entry, code string) (ownerclaim.Outcome, error)
}

// Answers to /owner. The refusal is one text for a wrong code, a used or
// expired one and no claim at all: it tells a guesser nothing.
const (
	ownerClaimed = "✅ You are the owner of this bot now. Write anything to talk to the agent; /help lists the commands."
	ownerRefused = "That owner code is not valid. Run clawhost init again for a new one."
)

// ownerCode returns the code of a direct message "/owner CODE" (also
// "/owner@botname CODE").
func ownerCode(body string) (string, bool) {
	name, arg, _ := strings.Cut(strings.TrimSpace(body), " ")
	if name != "/owner" && !strings.HasPrefix(name, "/owner@") {
		return "", false
	}
	arg = strings.TrimSpace(arg)
	return arg, arg != "" && !strings.ContainsAny(arg, " \n\t")
}

// claimOwner handles "/owner CODE" in a direct chat before the access gate:
// from any sender, even one the policy does not know, and never passed on
// to the agent. A match makes the sender an owner at once (this host's
// settings, and the file the host reads at every start and reload) and is
// audit-logged; anything else gets one generic refusal, at most one a
// minute per sender (wrong codes also count against the claim itself:
// ownerclaim.MaxAttempts burn it). It reports whether it handled a.
func (g *Gateway) claimOwner(a arrival) bool {
	m := &a.Message
	if g.opts.OwnerClaims == nil || m.IsGroup() {
		return false
	}
	code, ok := ownerCode(m.Command())
	if !ok {
		return false
	}
	out, err := g.opts.OwnerClaims.Claim(m.From, code)
	if err != nil {
		g.log.Error("owner claim failed", "sender", m.From, "error", err)
	}
	switch out {
	case ownerclaim.Claimed:
		if set := g.settings(); !slices.Contains(set.Access.Owners, m.From) {
			set.Access.Owners = append(slices.Clone(set.Access.Owners), m.From)
			g.SetSettings(set) // the approval stage's owners too
		}
		g.log.Info("owner claimed with the code of clawhost init", "sender", m.From)
		g.audit(store.AuditEvent{Kind: store.AuditPairing, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: m.From, Decision: "owner claimed",
			Detail: "/owner with the one-time code of clawhost init"})
		g.respond(a, ownerClaimed)
	default:
		g.log.Info("owner claim refused", "sender", m.From, "pending", out == ownerclaim.WrongCode)
		g.audit(store.AuditEvent{Kind: store.AuditPairing, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: m.From, Decision: "refused",
			Detail: "/owner with a wrong, used or expired code"})
		g.obs.Dropped(m.Instance, "owner claim refused")
		if g.ownerRefusals.Allow(m.From) {
			g.respond(a, ownerRefused)
			return true
		}
		g.finish(a.ID, store.StateDropped, "owner claim refused")
	}
	return true
}
