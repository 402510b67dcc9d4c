package channel

import "context"

// Invite, on an InboundMessage, makes it an invitation of the bot to the
// room ChatID by Sender, not a message (a channel that implements
// InviteAnswerer): the host judges the inviter with its access rules and
// answers through AnswerInvite before Deliver or Offer returns, so a
// plugin that moves its platform position only after they returned sees
// an unanswered invite again after a crash. It never reaches the agent.
type Invite struct {
	// IsDirect: the inviter means the room as a direct chat with the bot
	// (Matrix's is_direct).
	IsDirect bool
}

// InviteAnswerer is implemented by channels whose bot is invited to rooms
// and lets the host decide (capability "invites"): AnswerInvite joins
// chatID when join is true and declines the invite otherwise; reason says
// why, without secrets. It may be called again for an invite it already
// answered (a redelivery after a crash): joining a joined room or
// declining a gone invite is not an error worth failing for.
type InviteAnswerer interface {
	AnswerInvite(ctx context.Context, chatID string, join bool, reason string) error
}
