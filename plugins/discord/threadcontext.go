package discord

import (
	"context"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/sdk/channel"
)

// threadContextMax is how many of a thread's messages before the current
// one are read (the host trims them to its history limit).
const threadContextMax = 30

// threadContext is what thread hangs from, for the first of its messages
// this process sees (nil after): the message it was started from (in the
// parent channel, with the thread's id), then the thread's messages before
// msgID, oldest first. What Discord does not answer is left out.
func (a *Adapter) threadContext(ctx context.Context, parentID, thread, msgID string) []channel.ReplyTo {
	if !a.threadCtx.First(thread) {
		return nil
	}
	me := a.me.Load()
	post := func(m *discordgo.Message) (channel.ReplyTo, bool) {
		if m == nil || m.Author == nil || strings.TrimSpace(m.Content) == "" {
			return channel.ReplyTo{}, false
		}
		return channel.ReplyTo{MessageID: m.ID, Text: m.Content, SenderID: m.Author.ID,
			SenderName: sender(m.Author, m.Member).Name, ToBot: me != nil && m.Author.ID == me.UserID}, true
	}
	var out []channel.ReplyTo
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	if parentID != "" {
		if m, err := a.rest.ChannelMessage(parentID, thread, opt); err == nil {
			if p, ok := post(m); ok {
				out = append(out, p)
			}
		} else if restCode(err) != 10008 { // 10008: not started from a message
			a.log.Debug("could not read the thread's starter message", "thread", thread, "error", mapErr(err))
		}
	}
	msgs, err := a.rest.ChannelMessages(thread, threadContextMax, msgID, "", "", opt)
	if err != nil {
		a.log.Warn("could not read the thread's earlier messages; the message goes on without them", "thread", thread, "error", mapErr(err))
		return out
	}
	for i := len(msgs) - 1; i >= 0; i-- { // newest first
		if p, ok := post(msgs[i]); ok && msgs[i].ID != msgID && (len(out) == 0 || out[0].MessageID != p.MessageID) {
			out = append(out, p)
		}
	}
	return out
}
