package access

import (
	"errors"
	"slices"

	"github.com/clawhost/clawhost/core/message"
)

// Errors of [Policy.OwnersOnlyChat], each saying why the chat is refused.
var (
	// ErrNotOwner: the sender is not an owner.
	ErrNotOwner = errors.New("only an owner may do this")
	// ErrMembersUnknown: a group whose members the channel cannot list, so
	// nobody can tell that only owners read it.
	ErrMembersUnknown = errors.New("only in a chat nobody but owners can reach: this channel cannot tell clawhost who is in a group, so it is refused in groups — use your direct chat with the bot")
	// ErrNonOwnerMember: a group with a member who is not an owner.
	ErrNonOwnerMember = errors.New("only in a chat nobody but owners can reach: this group has members who are not owners — use your direct chat with the bot")
)

// OwnersOnlyChat is the one rule for what only an owner's own chat may do
// (continue the owner's terminal session, hand it back, attach a live
// one): the sender of m must be an owner, and nobody but owners may reach
// the chat — the owner's direct chat with the bot, or a group whose
// members are all owners. members are the group's members as
// "<instance>:<id>" entries when the channel can list them; nil when it
// cannot, and then a group is refused (an empty, non-nil list is a group
// of nobody else). It returns nil when allowed, else an error the sender
// may be shown.
func (a *Policy) OwnersOnlyChat(m *message.Message, members []string) error {
	if !a.IsOwner(m) {
		return ErrNotOwner
	}
	if !m.IsGroup() {
		return nil
	}
	if members == nil {
		return ErrMembersUnknown
	}
	for _, e := range members {
		if !slices.Contains(a.Owners, e) {
			return ErrNonOwnerMember
		}
	}
	return nil
}
