package matrix

import (
	"context"
	"errors"
	"fmt"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// invite handles an invitation of the bot to room. An inviter invites_from
// lists is joined at once (an extra allow besides the host's access
// rules); any other invite is offered to the host as an InboundMessage
// with Invite set (capability invites), which judges the inviter with the
// access block (allow_from, owners, pairing, dm_policy) and answers with
// AnswerInvite before it acks. ok false: nothing to offer.
func (a *Adapter) invite(ctx context.Context, cli *mautrix.Client, room id.RoomID, inv *mautrix.SyncInvitedRoom) (m channel.InboundMessage, ok bool) {
	inviter, direct, at := "", false, int64(0)
	for _, evt := range inv.State.Events {
		if evt.Type != event.StateMember || evt.GetStateKey() != cli.UserID.String() {
			continue
		}
		inviter, at = evt.Sender.String(), evt.Timestamp
		_ = evt.Content.ParseRaw(evt.Type)
		if mc := evt.Content.AsMember(); mc != nil {
			direct = mc.IsDirect
		}
	}
	if a.cfg.invitedBy(inviter) {
		err := a.call(ctx, func(ctx context.Context) error { _, err := cli.JoinRoomByID(ctx, room); return err })
		a.log.Info("joined a room on an invite from invites_from", "room", room, "inviter", inviter, "err", err)
		return channel.InboundMessage{}, false
	}
	ct := channel.ChatGroup
	if direct {
		ct = channel.ChatDirect
	}
	m = channel.InboundMessage{ChatType: ct, ChatID: room.String(), MessageID: "invite:" + room.String(),
		Sender: channel.Sender{ID: inviter}, Invite: &channel.Invite{IsDirect: direct}}
	if at > 0 {
		m.Timestamp = time.UnixMilli(at)
	}
	return m, true
}

// gone reports whether err is the homeserver refusing the answer for good
// (a 4xx other than a rate limit, which call waits out): the invite was
// withdrawn, or answered already (Dendrite: 400 "not joined to the room"
// for a second leave). Asking again would not change it.
func gone(err error) bool {
	var he mautrix.HTTPError
	if !errors.As(err, &he) || he.Response == nil {
		return false
	}
	c := he.Response.StatusCode
	return c >= 400 && c < 500 && c != 429
}

// AnswerInvite implements channel.InviteAnswerer: it joins the room, or
// leaves it (declines the invite; reason goes as the leave's reason, which
// a homeserver may keep or drop: Dendrite 0.13 did not keep it in
// TestInvitesAndRefusedToken). An invite that is gone — withdrawn, or
// answered before a crash — is not an error; a homeserver that cannot be
// reached is, and the host offers the invite again.
func (a *Adapter) AnswerInvite(ctx context.Context, chatID string, join bool, reason string) error {
	cli := a.client()
	if cli == nil {
		return channel.Errorf(channel.CodeUnavailable, "not logged in yet")
	}
	room := id.RoomID(chatID)
	var err error
	if join {
		err = a.call(ctx, func(ctx context.Context) error { _, err := cli.JoinRoomByID(ctx, room); return err })
	} else {
		err = a.call(ctx, func(ctx context.Context) error {
			_, err := cli.LeaveRoom(ctx, room, &mautrix.ReqLeave{Reason: reason})
			return err
		})
	}
	if gone(err) {
		a.log.Info("an invite that is gone (withdrawn, or answered before); nothing to answer", "room", room, "join", join, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("answering the invite to %s: %w", room, err)
	}
	if join {
		a.log.Info("joined a room on an invite the host allowed", "room", room, "why", reason)
	} else {
		a.log.Info("declined an invite the host refused", "room", room, "why", reason)
	}
	return nil
}
