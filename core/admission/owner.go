package admission

import (
	"context"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/store"
)

// Answers to /owner. The refusal is one text for a wrong code, a used or
// expired one and no claim at all: it tells a guesser nothing.
const (
	OwnerClaimed = "✅ You are the owner of this bot now. Write anything to talk to the agent; /help lists the commands."
	OwnerRefused = "That owner code is not valid. Run clawhost init again for a new one."
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

// claimOwner decides "/owner CODE" in a direct chat before the access gate:
// from any sender, even one the policy does not know, and never passed on
// to the agent. A match makes the sender an owner at once (Options.OnOwner;
// the claim itself persists it for the next start) and is audit-logged;
// anything else gets one generic refusal, at most one a minute per sender
// (wrong codes also count against the claim itself: ownerclaim.MaxAttempts
// burn it). It reports whether it decided m.
func (s *Stage) claimOwner(ctx context.Context, m *message.Message) (Verdict, bool) {
	if s.opts.OwnerClaims == nil || m.IsGroup() {
		return Verdict{}, false
	}
	code, ok := ownerCode(m.Command())
	if !ok {
		return Verdict{}, false
	}
	out, err := s.opts.OwnerClaims.Claim(m.From, code)
	if err != nil {
		s.log.Error("owner claim failed", "sender", m.From, "error", err)
	}
	if out == ownerclaim.Claimed {
		if s.opts.OnOwner != nil {
			s.opts.OnOwner(m.From)
		}
		s.log.Info("owner claimed with the code of clawhost init", "sender", m.From)
		s.audit(ctx, store.AuditEvent{Kind: store.AuditPairing, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: m.From, Decision: "owner claimed",
			Detail: "/owner with the one-time code of clawhost init"})
		return answer(OwnerClaimed), true
	}
	s.log.Info("owner claim refused", "sender", m.From, "pending", out == ownerclaim.WrongCode)
	s.audit(ctx, store.AuditEvent{Kind: store.AuditPairing, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: m.From, Decision: "refused",
		Detail: "/owner with a wrong, used or expired code"})
	s.opts.Observer.Dropped(m.Instance, "owner claim refused")
	if s.ownerRefusals.Allow(m.From) {
		return answer(OwnerRefused), true
	}
	return drop(store.StateDropped, "owner claim refused"), true
}
