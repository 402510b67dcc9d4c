package gateway

import (
	"context"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Invite decides an invitation of the bot (in.Invite set) to a room of
// instance with the access rules in force (admission.Stage.Invite): join,
// or decline with the reason. It is not journaled.
func (g *Gateway) Invite(ctx context.Context, instance string, in channel.InboundMessage) (join bool, reason string) {
	m, _ := message.Normalize(instance, g.settings().Sources[instance], in, g.opts.Now())
	direct := in.Invite != nil && in.Invite.IsDirect
	return g.admission.Invite(ctx, g.settings().Access, &m, direct)
}
