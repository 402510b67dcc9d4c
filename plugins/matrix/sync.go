package matrix

import (
	"context"
	"errors"
	"fmt"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// Run implements channel.Channel: it logs in (or takes the token), then
// long-polls /sync until ctx ends. A batch's messages are offered to the
// host and the sync position stored only after the host stored them
// (exactly once across restarts, see state). A refused token is
// needs_attention until Retry; other failures are retried with backoff.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	if a.st == nil {
		return errors.New("matrix: run before configure")
	}
	backoff := backoffMin
	for ctx.Err() == nil {
		err := a.session(ctx, inbox)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var re *recoveryError
		if errors.As(err, &re) {
			if !a.attention(ctx, re.msg) {
				return ctx.Err()
			}
			backoff = backoffMin
			continue
		}
		if msg := refused(err); msg != "" {
			a.mu.Lock()
			a.cli = nil
			a.mu.Unlock()
			if a.cfg.AccessToken == "" {
				// A password login's token was refused: log in afresh.
				_ = a.st.update(func(s *state) { s.AccessToken = "" })
			}
			if !a.attention(ctx, msg) {
				return ctx.Err()
			}
			backoff = backoffMin
			continue
		}
		a.log.Warn("the connection to the homeserver failed; retrying", "err", err, "in", backoff)
		a.status.Report(status.Status{State: status.Degraded, Message: "cannot reach the homeserver: " + err.Error()})
		if a.sleep(ctx, backoff) != nil {
			return ctx.Err()
		}
		backoff = min(backoff*2, backoffMax)
	}
	return ctx.Err()
}

// session logs in and syncs until an error.
func (a *Adapter) session(ctx context.Context, inbox channel.Inbox) error {
	cli, err := a.login(ctx)
	if err != nil {
		return err
	}
	a.reportSyncing()
	for {
		since := a.st.get().Since
		var resp *mautrix.RespSync
		err := a.call(ctx, func(ctx context.Context) error {
			var err error
			resp, err = cli.SyncRequest(ctx, pollTimeout, since, "", false, event.PresenceOnline)
			return err
		})
		if err != nil {
			return err
		}
		if a.e2ee != nil {
			a.e2ee.noteSync(ctx, resp, since)
		}
		if err := a.batch(ctx, cli, inbox, since == "", resp); err != nil {
			return err
		}
		if err := a.st.update(func(s *state) { s.Since = resp.NextBatch }); err != nil {
			return fmt.Errorf("storing the sync position: %w", err)
		}
	}
}

// login returns the client with the configured token, or the one a
// password login made before (kept in the state), or logs in with the
// password and keeps the device.
func (a *Adapter) login(ctx context.Context) (*mautrix.Client, error) {
	a.loginMu.Lock()
	defer a.loginMu.Unlock()
	if c := a.client(); c != nil {
		return c, nil
	}
	st := a.st.get()
	token := a.cfg.AccessToken
	if token == "" {
		token = st.AccessToken
	}
	cli, err := mautrix.NewClient(a.cfg.Homeserver, id.UserID(a.cfg.UserID), token)
	if err != nil {
		return nil, err
	}
	cli.Client = a.http
	cli.DefaultHTTPRetries = 0 // rate limits are waited out by call
	if token == "" {
		var resp *mautrix.RespLogin
		err := a.call(ctx, func(ctx context.Context) error {
			var err error
			resp, err = cli.Login(ctx, &mautrix.ReqLogin{
				Type:                     mautrix.AuthTypePassword,
				Identifier:               mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: a.cfg.UserID},
				Password:                 a.cfg.Password,
				DeviceID:                 id.DeviceID(st.DeviceID),
				InitialDeviceDisplayName: "clawhost",
				StoreCredentials:         true,
			})
			return err
		})
		if err != nil {
			return nil, err
		}
		if err := a.st.update(func(s *state) { s.AccessToken, s.DeviceID = resp.AccessToken, resp.DeviceID.String() }); err != nil {
			return nil, err
		}
	}
	var who *mautrix.RespWhoami
	if err := a.call(ctx, func(ctx context.Context) error {
		var err error
		who, err = cli.Whoami(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	if who.UserID.String() != a.cfg.UserID {
		return nil, fmt.Errorf("%w: the access token is %s's, not %s's", mautrix.MForbidden, who.UserID, a.cfg.UserID)
	}
	cli.DeviceID = who.DeviceID
	name := cli.UserID.Localpart()
	if dn, err := cli.GetOwnDisplayName(ctx); err == nil && dn.DisplayName != "" {
		name = dn.DisplayName
	}
	e, err := a.startCrypto(ctx, cli, a.st.dir)
	if err == nil && e != nil {
		if err := a.crossSign(ctx, e); err != nil {
			return nil, err
		}
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err() // stopping
	}
	if err != nil {
		// Unencrypted rooms still work; encrypted messages are answered
		// with the could-not-decrypt notice, and the status says why.
		a.log.Error("end-to-end encryption is off", "err", err)
		a.noCrypto = "end-to-end encryption is off (" + err.Error() + "): with an access token whose device already has other keys, set password instead (a new device), or give the device's token with its crypto store"
	}
	a.mu.Lock()
	a.cli, a.name, a.e2ee, a.maxUpload = cli, name, e, 0
	a.mu.Unlock()
	return cli, nil
}

// batch handles one sync response: the invites (see invite) and the
// joined rooms' messages offered to the host, the sync position stored by
// the caller only once the host took them all — an invite the host has
// not answered yet comes again on the next sync. On the first sync of a
// fresh state (first) the rooms' history — what was written before the
// plugin was first configured (state.From) — is skipped: the bot answers
// what is written from then on.
func (a *Adapter) batch(ctx context.Context, cli *mautrix.Client, inbox channel.Inbox, first bool, resp *mautrix.RespSync) error {
	var msgs []channel.InboundMessage
	for room, inv := range resp.Rooms.Invite {
		if m, ok := a.invite(ctx, cli, room, inv); ok {
			msgs = append(msgs, m)
		}
	}
	from := a.st.get().From
	var last map[id.RoomID]id.EventID = map[id.RoomID]id.EventID{}
	for room, jr := range resp.Rooms.Join {
		for _, evt := range jr.State.Events {
			a.noteState(room, evt)
		}
		for _, evt := range jr.Timeline.Events {
			evt.RoomID = room
			if evt.StateKey != nil {
				a.noteState(room, evt)
				continue
			}
			if first && evt.Timestamp < from {
				continue
			}
			if evt.Type == event.EventEncrypted && evt.Sender != cli.UserID {
				dec, err := a.decrypt(ctx, evt)
				if err != nil {
					a.log.Warn("an encrypted message the plugin cannot decrypt; its sender is told", "room", room, "sender", evt.Sender, "event", evt.ID, "err", err)
					a.undecryptable(ctx, cli, evt)
					continue
				}
				evt = dec
			}
			m, ok := a.inbound(ctx, cli, evt)
			if !ok && evt.Type == event.EventReaction && evt.Sender != cli.UserID {
				if m, ok = a.press(evt); ok {
					m.ChatType = a.chatType(ctx, cli, room)
				}
			}
			if !ok {
				continue
			}
			msgs = append(msgs, m)
			last[room] = evt.ID
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := channel.Offer(ctx, inbox, msgs...); err != nil {
		return err
	}
	for room, ev := range last {
		// The read receipt says the message reached the agent.
		if err := cli.MarkRead(ctx, room, ev); err != nil {
			a.log.Debug("could not send the read receipt", "room", room, "err", err)
		}
	}
	return nil
}

// undecryptableNotice is what the sender of an encrypted message the
// device holds no key for is told.
const undecryptableNotice = "⚠️ I could not decrypt your message, so it did not reach the agent: verify this device (the bot's session), or send it again once your client has shared its keys with it."

// undecryptable tells the sender of an encrypted event that the bot could
// not read it, as a notice replying to it: the message is never dropped
// silently.
func (a *Adapter) undecryptable(ctx context.Context, cli *mautrix.Client, evt *event.Event) {
	c := &event.MessageEventContent{MsgType: event.MsgNotice, Body: undecryptableNotice,
		Mentions: &event.Mentions{UserIDs: []id.UserID{evt.Sender}}, RelatesTo: (&event.RelatesTo{}).SetReplyTo(evt.ID)}
	if _, err := a.sendEvent(ctx, cli, evt.RoomID, event.EventMessage, c); err != nil {
		a.log.Error("could not tell the sender their encrypted message was not read", "room", evt.RoomID, "err", err)
	}
}

// decrypt is evt decrypted; an error without encryption set up.
func (a *Adapter) decrypt(ctx context.Context, evt *event.Event) (*event.Event, error) {
	a.mu.Lock()
	e := a.e2ee
	a.mu.Unlock()
	if e == nil {
		return nil, errors.New("no encryption without a state directory")
	}
	return e.decrypt(ctx, evt)
}
