package pluginhost

import (
	"context"
	"fmt"
	"slices"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// InviteFunc decides an invitation of the bot to room in.ChatID of
// instance by in.Sender: join, or decline with the reason.
type InviteFunc func(ctx context.Context, instance string, in channel.InboundMessage) (join bool, reason string)

// answeringInvites wraps inbound: the invites of a batch are decided by
// decide and answered to the plugin (AnswerInvite) first, the rest goes to
// inbound. An answer the plugin could not carry out fails the batch, which
// is nacked and comes again: the plugin keeps an invite until the batch is
// acked, so an invite pending when the host or the plugin dies is decided
// and answered again (joining twice is harmless). A nil inbound stays nil
// (the pump then drops everything and never acks).
func answeringInvites(plug *pluginclient.Plugin, inbound InboundFunc, decide InviteFunc) InboundFunc {
	if inbound == nil {
		return nil
	}
	return func(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
		if !slices.ContainsFunc(msgs, func(m channel.InboundMessage) bool { return m.Invite != nil }) {
			return inbound(ctx, instance, msgs)
		}
		var rest []channel.InboundMessage
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
		if len(rest) == 0 {
			return nil
		}
		return inbound(ctx, instance, rest)
	}
}
