package admission

import (
	"context"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
)

// Invite decides an invitation of the bot to room m.ChatID by m's sender
// under pol (access.Policy.Invite): join, or decline with the reason. A
// decline is an audit row (kind invite) naming the inviter and why, and a
// log line. The invite is not a message: it is neither journaled nor
// passed on.
func (s *Stage) Invite(ctx context.Context, pol access.Policy, m *message.Message, direct bool) (join bool, reason string) {
	approved := func(ctx context.Context, instance, sender string) bool {
		ok, err := s.opts.Pairing.IsApproved(ctx, instance, sender, pol.PairingTTL)
		if err != nil {
			s.log.Warn("pairing lookup failed; inviter treated as unknown", "error", err)
		}
		return ok
	}
	join, reason = pol.Invite(ctx, m, direct, approved)
	if join {
		s.log.Info("joining a room on an invite", "instance", m.Instance, "room", m.ChatID, "inviter", m.From, "direct", direct, "why", reason)
		return true, reason
	}
	s.log.Info("declining an invite", "instance", m.Instance, "room", m.ChatID, "inviter", m.From, "direct", direct, "why", reason)
	s.opts.Observer.Dropped(m.Instance, "invite declined")
	s.audit(ctx, store.AuditEvent{Kind: store.AuditInvite, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: m.From, Decision: "declined", Detail: reason})
	return false, reason
}
