package access

import (
	"errors"
	"testing"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestOwnersOnlyChat: the owner's direct chat is allowed; a non-owner is
// refused anywhere (allow_from, members and pairing grant nothing here); a
// group is allowed only when its members are known and all owners.
func TestOwnersOnlyChat(t *testing.T) {
	t.Parallel()
	p := Policy{DMPolicy: PolicyOpen, Owners: []string{"tg:9", "tg:8"}, AllowFrom: []string{"tg:1"}, Members: []string{"tg:2"},
		GroupPolicy: PolicyOpen, Groups: []string{"tg:-5"}}
	msg := func(typ channel.ChatType, chat, sender string, alt ...string) *message.Message {
		return &message.Message{Instance: "tg", ChatType: typ, ChatID: chat, Sender: channel.Sender{ID: sender, AltIDs: alt}, From: "tg:" + sender}
	}
	for _, tc := range []struct {
		name    string
		m       *message.Message
		members []string
		want    error
	}{
		{"owner's direct chat", msg(channel.ChatDirect, "9", "9"), nil, nil},
		{"owner by alternate id", msg(channel.ChatDirect, "77", "77", "8"), nil, nil},
		{"allow_from is no owner", msg(channel.ChatDirect, "1", "1"), nil, ErrNotOwner},
		{"a member is no owner", msg(channel.ChatDirect, "2", "2"), nil, ErrNotOwner},
		{"a stranger under open dms", msg(channel.ChatDirect, "5", "5"), nil, ErrNotOwner},
		{"non-owner in an all-owner group", msg(channel.ChatGroup, "-5", "1"), []string{"tg:9", "tg:8"}, ErrNotOwner},
		{"group, members unknown", msg(channel.ChatGroup, "-5", "9"), nil, ErrMembersUnknown},
		{"channel chat, members unknown", msg(channel.ChatChannel, "-5", "9"), nil, ErrMembersUnknown},
		{"group with a non-owner", msg(channel.ChatGroup, "-5", "9"), []string{"tg:9", "tg:1"}, ErrNonOwnerMember},
		{"group of owners", msg(channel.ChatGroup, "-5", "9"), []string{"tg:9", "tg:8"}, nil},
		{"group of the owner alone", msg(channel.ChatGroup, "-5", "9"), []string{}, nil},
		{"wildcard member is not an owner", msg(channel.ChatGroup, "-5", "9"), []string{"tg:*"}, ErrNonOwnerMember},
	} {
		if got := p.OwnersOnlyChat(tc.m, tc.members); !errors.Is(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if err := (&Policy{}).OwnersOnlyChat(msg(channel.ChatDirect, "9", "9"), nil); !errors.Is(err, ErrNotOwner) {
		t.Errorf("no owners configured: %v, want ErrNotOwner", err)
	}
}
