package pluginhost

import (
	"context"
	"fmt"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// InviteFunc decides the bot's invitation to in.ChatID by in.Sender.
type InviteFunc func(ctx context.Context, instance string, in channel.InboundMessage) (join bool, reason string)

// answeringInvites wraps inbound: a batch's invites are decided (nil
// decide: declined) and answered first, the rest goes to inbound. A failed
// answer nacks the batch; the plugin keeps an invite until it is acked, so
// one pending when either side dies is answered again.
func answeringInvites(plug *pluginclient.Plugin, inbound InboundFunc, decide InviteFunc) InboundFunc {
	if inbound == nil {
		return nil
	}
	return func(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
		rest := make([]channel.InboundMessage, 0, len(msgs))
		for _, m := range msgs {
			if m.Invite == nil {
				rest = append(rest, m)
				continue
			}
			join, reason := false, "this host does not decide invites"
			if decide != nil {
				join, reason = decide(ctx, instance, m)
			}
			if err := plug.AnswerInvite(ctx, m.ChatID, join, reason); err != nil {
				return fmt.Errorf("answering the invite to %s: %w", m.ChatID, err)
			}
		}
		if len(rest) > 0 {
			return inbound(ctx, instance, rest)
		}
		return nil
	}
}
