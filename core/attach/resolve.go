package attach

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Sessions lists the stored sessions (core/store).
type Sessions interface {
	RecentSessions(ctx context.Context, limit int) ([]store.Session, error)
}

// scanSessions bounds how many recent sessions Resolve looks through.
const scanSessions = 2000

// Errors of Resolve.
var (
	ErrChatForm    = errors.New(`name the chat as <instance>:<chat id>, e.g. -chat telegram:123456789 (the instance is the plugin block's name in config.hcl)`)
	ErrChatUnknown = errors.New("clawhost has no session of this chat yet: write to the bot from that chat once, then attach")
	ErrChatShared  = errors.New("this chat shares its session with other chats (session.dm_scope), so attaching would put them in the terminal too: only a chat with a session of its own can be attached")
)

// Resolve finds the session of chat ("<instance>:<chat id>") and applies
// the owner rule (access.Policy.OwnersOnlyChat): only an owner's direct
// chat may be attached, as if its owner had asked from it (a group's
// members cannot be listed here, so a group is refused). It returns the
// session key.
func Resolve(ctx context.Context, db Sessions, policy *access.Policy, chat string) (string, error) {
	instance, id, ok := strings.Cut(chat, ":")
	if !ok || instance == "" || id == "" {
		return "", ErrChatForm
	}
	list, err := db.RecentSessions(ctx, scanSessions)
	if err != nil {
		return "", fmt.Errorf("reading the sessions: %w", err)
	}
	cache := session.NewCache(16)
	for _, s := range list {
		m := cache.Of(s)
		if m.Instance != instance || m.ChatID != id || m.ThreadID != "" {
			continue
		}
		// The terminal holds the host's token: it asks as the chat's owner
		// (a direct chat's peer; in a group, an owner on the instance),
		// and the chat must be one nobody but owners can reach.
		sender := id
		msg := &message.Message{Instance: instance, ChatType: channel.ChatType(m.ChatType), ChatID: id}
		if msg.ChatType == "" {
			msg.ChatType = channel.ChatDirect
		}
		if msg.IsGroup() {
			for _, o := range policy.Owners {
				if rest, ok := strings.CutPrefix(o, instance+":"); ok {
					sender = rest
					break
				}
			}
		}
		msg.Sender, msg.From = channel.Sender{ID: sender}, instance+":"+sender
		if err := policy.OwnersOnlyChat(msg, nil); err != nil {
			return "", err
		}
		if !strings.HasSuffix(strings.ToLower(s.Key), ":"+strings.ToLower(id)) {
			return "", ErrChatShared
		}
		return s.Key, nil
	}
	return "", ErrChatUnknown
}
