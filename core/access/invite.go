package access

import (
	"context"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Invite decides an invitation of the bot to a room (a Matrix invite) by
// the sender of m, judged as a direct sender under the policy: an owner,
// a sender allow_from lists or one approved through pairing → join; under
// dm_policy "open" anyone → join; under "pairing" a stranger's direct
// room (direct: the inviter means it as a DM) → join, so that what they
// write there gets the pairing code the usual way, but a stranger's group
// room → decline; under "allowlist" (and any other policy) a stranger →
// decline. reason says why, for the log and the audit trail. Whether the
// bot answers in a joined group room is still the group rules' (groups,
// group_allow_from), as for every channel.
func (a *Policy) Invite(ctx context.Context, m *message.Message, direct bool, approved func(context.Context, string, string) bool) (join bool, reason string) {
	dm := *m
	dm.ChatType = channel.ChatDirect
	switch {
	case a.IsOwner(&dm):
		return true, "the inviter is an owner"
	case senderListed(a.AllowFrom, &dm):
		return true, "the inviter is in access.allow_from"
	case a.DMPolicy == PolicyOpen:
		return true, `access.dm_policy is "open"`
	}
	if a.DMPolicy == PolicyPairing || a.DMPolicy == "" {
		if approved != nil {
			for _, id := range dm.SenderIDs() {
				if approved(ctx, dm.Instance, id) {
					return true, "the inviter was approved through pairing"
				}
			}
		}
		if direct {
			return true, "a direct room from an unknown inviter: they get a pairing code when they write"
		}
		return false, "a group room from an unknown inviter (access.dm_policy is \"pairing\"; approve them, or add them to access.allow_from)"
	}
	return false, "the inviter is not allowed (access.dm_policy is \"" + a.DMPolicy + "\"; add them to access.allow_from or access.owners)"
}
