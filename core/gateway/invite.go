package gateway

import (
	"context"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// AccessPort is the access rules in force for the host's doors beside the
// pipeline: pairing, an attached terminal, a channel's invitations.
type AccessPort struct{ g *Gateway }

// Access is the access rules in force (a reload changes them).
func (g *Gateway) Access() AccessPort { return AccessPort{g} }

// Policy is the access block in force.
func (a AccessPort) Policy() access.Policy { return a.g.settings().Access }

// Invite decides an invitation of the bot (in.Invite set) to a room of
// instance with the access rules in force (admission.Stage.Invite): join,
// or decline with the reason. It is not journaled.
func (a AccessPort) Invite(ctx context.Context, instance string, in channel.InboundMessage) (join bool, reason string) {
	g := a.g
	m, _ := message.Normalize(instance, g.settings().Sources[instance], in, g.opts.Now())
	direct := in.Invite != nil && in.Invite.IsDirect
	return g.admission.Invite(ctx, g.settings().Access, &m, direct)
}
