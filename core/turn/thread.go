package turn

import (
	"strings"

	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/message"
)

// threadContextDefault is how many of a thread's earlier messages (after
// its parent post) the first turn shows when group history is off.
const threadContextDefault = 20

// threadContext puts what last's thread hangs from before current, on the
// thread session's first turn: the parent post, then the thread's earlier
// messages up to the group history limit, each fenced — the bot's own and
// the sender's own as quoted context, anyone else's as untrusted content
// (they may be people the operator never admitted).
func (t *Turns) threadContext(set Settings, last *message.Message, current string) string {
	posts := last.ThreadContext
	limit := set.GroupHistoryLimit
	if limit <= 0 {
		limit = threadContextDefault
	}
	if len(posts) > limit+1 {
		posts = append(posts[:1:1], posts[len(posts)-limit:]...)
	}
	blocks := make([]string, 0, len(posts))
	for _, p := range posts {
		var b string
		if p.ToBot || (p.SenderID != "" && p.SenderID == last.Sender.ID) {
			sender := p.SenderName
			if p.ToBot {
				sender = "you (the assistant)"
			}
			b = envelope.ThreadPost(envelope.ReplyTo{Sender: sender, ID: p.MessageID, Body: p.Text})
		} else {
			b = envelope.UntrustedBlock(t.opts.BoundaryID(), envelope.Untrusted{Source: envelope.SourceThread, From: p.SenderName, Body: neutralized(p.Text)})
		}
		if b != "" {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) == 0 {
		return current
	}
	if !strings.HasPrefix(current, envelope.HistoryMarker) && !strings.HasPrefix(current, envelope.RecentHistoryMarker) {
		current = envelope.CurrentMarker + "\n" + current
	}
	return envelope.ThreadMarker + "\n" + strings.Join(blocks, "\n\n") + "\n\n" + current
}
