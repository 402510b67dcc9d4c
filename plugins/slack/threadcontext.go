package slack

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
)

// threadContextMax is how many of a thread's messages before the current
// one are attached (the parent post and the latest earlier replies); the
// host trims them to its history limit.
const threadContextMax = 30

// threadContext is the parent post and the earlier replies of the thread
// threadTS in channel, before the message ts (conversations.replies), for
// the first message of the thread this process sees; nil after that, or
// when Slack does not answer (the message goes on without it).
func (a *Adapter) threadContext(ctx context.Context, ch, threadTS, ts string) []channel.ReplyTo {
	if !a.threadCtx.First(ch + "/" + threadTS) {
		return nil
	}
	me := a.me.Load()
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	msgs, _, _, err := a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: ch, Timestamp: threadTS, Latest: ts, Inclusive: false, Limit: 200,
	})
	if err != nil {
		a.noteScope("conversations.replies", err)
		a.log.Warn("could not read the thread's earlier messages; the message goes on without them", "channel", ch, "thread", threadTS, "error", err)
		return nil
	}
	var out []channel.ReplyTo
	for _, m := range msgs {
		if m.Timestamp == ts || m.Text == "" {
			continue
		}
		r := channel.ReplyTo{MessageID: m.Timestamp, SenderID: m.User, Text: a.plainText(ctx, m.Text, me, false)}
		if m.User != "" {
			r.SenderName = a.userName(ctx, m.User)
		}
		if me != nil && (m.User == me.UserID || m.BotID != "" && m.BotID == me.BotID) {
			r.ToBot = true
		}
		out = append(out, r)
	}
	if len(out) > threadContextMax {
		out = append(out[:1:1], out[len(out)-threadContextMax+1:]...)
	}
	return out
}
