package slack

import (
	"context"
	"sync"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
)

// threadContextMax is how many of a thread's messages before the current
// one are attached (the parent post and the latest earlier replies); the
// host trims them to its history limit.
const threadContextMax = 30

// attachedMax bounds the set of threads whose context was attached.
const attachedMax = 4096

// attached remembers the threads whose context went to the host with one
// of their messages, so that a thread costs one conversations.replies per
// plugin process: the host uses the context on the thread session's first
// turn only. After a restart a thread's next message carries it again,
// which the host ignores when the session has turns.
type attached struct {
	mu sync.Mutex
	m  map[string]bool
}

// first reports whether key was not attached yet, and marks it.
func (s *attached) first(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] {
		return false
	}
	if s.m == nil || len(s.m) >= attachedMax {
		s.m = map[string]bool{}
	}
	s.m[key] = true
	return true
}

// threadContext is the parent post and the earlier replies of the thread
// threadTS in channel, before the message ts (conversations.replies), for
// the first message of the thread this process sees; nil after that, or
// when Slack does not answer (the message goes on without it).
func (a *Adapter) threadContext(ctx context.Context, ch, threadTS, ts string) []channel.ReplyTo {
	if !a.threadCtx.first(ch + "/" + threadTS) {
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
