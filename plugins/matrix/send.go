package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/canonicaljson"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// maxOwn is how many of the bot's own event ids are remembered (replies
// to them count as mentions).
const maxOwn = 4096

// Send implements channel.Channel: one m.room.message (m.text, with the
// HTML as formatted_body when the text is markdown), in the thread and as
// the reply asked for. Files go first, each an m.file/m.image event.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	cli, err := a.connected(ctx)
	if err != nil {
		return channel.SendResponse{}, err
	}
	room := id.RoomID(req.ChatID)
	if !strings.HasPrefix(req.ChatID, "!") {
		return channel.SendResponse{}, &channel.Error{Code: channel.CodeChatNotFound, Message: "not a Matrix room id: " + req.ChatID}
	}
	var ids []string
	for _, f := range req.Media {
		evID, err := a.sendFile(ctx, cli, room, req, f)
		if err != nil {
			return channel.SendResponse{MessageIDs: ids}, err
		}
		ids = append(ids, evID.String())
	}
	n := len(req.Text)
	if _, visible, ok := req.Rendered.Of(channel.MarkupRichHTML); ok && req.Format == channel.FormatMarkdown {
		n = len(visible)
	}
	if n > MaxTextLength {
		return channel.SendResponse{}, &channel.Error{Code: channel.CodeMessageTooLong, Message: fmt.Sprintf("%d bytes of text, over the %d of one event", n, MaxTextLength)}
	}
	if req.Text != "" || len(req.Media) == 0 {
		c := a.content(ctx, room, req.Text, req.Format, req.Rendered)
		c.RelatesTo = relation(req.ThreadID, req.ReplyToMessageID)
		q, list := withButtons(room, req.Buttons)
		addList(c, list)
		if !a.fits(ctx, room, c) {
			// Text of control characters, each six bytes of JSON.
			return channel.SendResponse{MessageIDs: ids}, &channel.Error{Code: channel.CodeMessageTooLong,
				Message: "the text does not fit one Matrix event (65,536 bytes of JSON) even without its HTML"}
		}
		evID, err := a.sendEvent(ctx, cli, room, event.EventMessage, c)
		if err != nil {
			return channel.SendResponse{MessageIDs: ids}, err
		}
		ids = append(ids, evID.String())
		if q != nil {
			a.ask(ctx, cli, evID, q)
		}
	}
	return channel.SendResponse{MessageIDs: ids}, nil
}

// relation is the m.relates_to of a message in thread (a thread root's
// event id) replying to reply; nil for neither.
func relation(thread, reply string) *event.RelatesTo {
	switch {
	case thread != "":
		fallback := id.EventID(reply)
		if fallback == "" {
			fallback = id.EventID(thread)
		}
		return (&event.RelatesTo{}).SetThread(id.EventID(thread), fallback)
	case reply != "":
		return (&event.RelatesTo{}).SetReplyTo(id.EventID(reply))
	}
	return nil
}

// content is the message content of text: plain, or the host's rich-html
// rendering as formatted_body and its visible text as body (the plain
// fallback).
func (a *Adapter) content(ctx context.Context, room id.RoomID, text string, f channel.Format, r *channel.Rendered) *event.MessageEventContent {
	c := &event.MessageEventContent{MsgType: event.MsgText, Body: text, Mentions: &event.Mentions{}}
	if f != channel.FormatMarkdown {
		return c
	}
	if html, visible, ok := r.Of(channel.MarkupRichHTML); ok {
		c.Body = visible
		c.Format = event.FormatHTML
		c.FormattedBody = html
		if !a.fits(ctx, room, c) {
			// Text of mostly < and & whose HTML, escaped for JSON, would
			// not fit one event: sent as its visible text, which does.
			c.Format, c.FormattedBody = "", ""
		}
	}
	return c
}

// fits reports whether content c makes an event of at most maxEventBytes
// in room: its JSON as mautrix sends it (json.Marshal, which writes <, >
// and & as six bytes, \u003c), and in an encrypted room the Megolm
// ciphertext of its canonical JSON (which writes them as they are):
// base64, 4/3 of it, with the encrypted event's own keys.
func (a *Adapter) fits(ctx context.Context, room id.RoomID, c *event.MessageEventContent) bool {
	if a.roomEncrypted(ctx, room) {
		b, err := canonicaljson.Marshal(c)
		return err == nil && (len(b)+encryptedEnvelope)*4/3+encryptedEnvelope <= maxEventBytes
	}
	b, err := json.Marshal(c)
	return err == nil && len(b) <= maxEventBytes
}

// encryptedEnvelope is a generous bound of what Megolm adds around a
// content (its type, room id, and the encrypted event's algorithm, keys
// and session ids).
const encryptedEnvelope = 512

// htmlLines is text as HTML: escaped, its newlines <br>.
func htmlLines(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "\n", "<br>")
}

// sendEvent sends one event, waiting out rate limits, and maps the
// homeserver's refusals to the host's codes.
func (a *Adapter) sendEvent(ctx context.Context, cli *mautrix.Client, room id.RoomID, t event.Type, c any) (id.EventID, error) {
	a.mu.Lock()
	e := a.e2ee
	a.mu.Unlock()
	if e != nil && t != event.EventReaction {
		enc, on, err := e.encrypted(ctx, cli, room, t, c)
		if err != nil {
			return "", fmt.Errorf("encrypting for %s: %w", room, err)
		}
		if on {
			t, c = event.EventEncrypted, enc
		}
	}
	var resp *mautrix.RespSendEvent
	err := a.call(ctx, func(ctx context.Context) error {
		var err error
		resp, err = cli.SendMessageEvent(ctx, room, t, c)
		return err
	})
	if err != nil {
		return "", sendError(err)
	}
	a.noteOwn(resp.EventID)
	return resp.EventID, nil
}

// sendError is err as the host's error.
func sendError(err error) error {
	switch {
	// Dendrite answers a send to a room it does not know with
	// M_UNSUPPORTED_ROOM_VERSION ("missing room info").
	case errors.Is(err, mautrix.MForbidden), errors.Is(err, mautrix.MNotFound), errors.Is(err, mautrix.MUnsupportedRoomVersion):
		return &channel.Error{Code: channel.CodeChatNotFound, Message: err.Error()}
	case errors.Is(err, mautrix.MTooLarge):
		return &channel.Error{Code: channel.CodeMessageTooLong, Message: err.Error()}
	}
	if d, ok := rateWait(err); ok {
		return &channel.Error{Code: channel.CodeRateLimited, Message: err.Error(), RetryAfter: d}
	}
	return err
}

// connected is the logged-in client, logging in first when Run has not
// yet (a send before the first sync); a homeserver that cannot be reached
// is unavailable.
func (a *Adapter) connected(ctx context.Context) (*mautrix.Client, error) {
	if cli := a.client(); cli != nil {
		return cli, nil
	}
	cli, err := a.login(ctx)
	if err != nil {
		if msg := refused(err); msg != "" {
			return nil, &channel.Error{Code: channel.CodeUnauthorized, Message: msg}
		}
		return nil, &channel.Error{Code: channel.CodeUnavailable, Message: "not connected to the homeserver: " + err.Error()}
	}
	return cli, nil
}

// noteOwn remembers one of the bot's event ids.
func (a *Adapter) noteOwn(ev id.EventID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.own == nil || len(a.own) >= maxOwn {
		a.own = map[id.EventID]bool{}
	}
	a.own[ev] = true
}

func (a *Adapter) isOwn(ev id.EventID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.own[ev]
}

// Edit implements channel.Editor: an m.replace of the message (a live
// draft, the turn card).
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	cli, err := a.connected(ctx)
	if err != nil {
		return err
	}
	nc := a.content(ctx, id.RoomID(req.ChatID), req.Text, req.Format, req.Rendered)
	q, list := withButtons(id.RoomID(req.ChatID), req.Buttons)
	addList(nc, list)
	c := &event.MessageEventContent{MsgType: event.MsgText, Body: "* " + nc.Body, NewContent: nc,
		RelatesTo: &event.RelatesTo{Type: event.RelReplace, EventID: id.EventID(req.MessageID)}}
	if nc.FormattedBody != "" {
		c.Format, c.FormattedBody = event.FormatHTML, "* "+nc.FormattedBody
	}
	if !a.fits(ctx, id.RoomID(req.ChatID), c) {
		// The text is in the event twice (m.new_content and the fallback
		// for clients without edits): the fallback gives way, never the
		// new text.
		c.Format, c.FormattedBody = "", ""
		if !a.fits(ctx, id.RoomID(req.ChatID), c) {
			c.Body = "* (edited)"
		}
	}
	if _, err := a.sendEvent(ctx, cli, id.RoomID(req.ChatID), event.EventMessage, c); err != nil {
		return err
	}
	if a.asked(id.EventID(req.MessageID), q) {
		return nil
	}
	a.unask(id.EventID(req.MessageID))
	if q != nil {
		a.ask(ctx, cli, id.EventID(req.MessageID), q)
	}
	return nil
}

// addList appends the buttons' list to c's text (and HTML).
func addList(c *event.MessageEventContent, list string) {
	if list == "" {
		return
	}
	c.Body += list
	if c.FormattedBody != "" {
		c.FormattedBody += htmlLines(list)
	}
}

// React implements channel.Reactor: an m.reaction annotating the message;
// Remove redacts the bot's reaction.
func (a *Adapter) React(ctx context.Context, req channel.ReactRequest) error {
	cli, err := a.connected(ctx)
	if err != nil {
		return err
	}
	room := id.RoomID(req.ChatID)
	key := req.ChatID + "/" + req.MessageID + "/" + req.Emoji
	if req.Remove {
		a.mu.Lock()
		var evs []id.EventID
		for k, ev := range a.reacted {
			if k == key || (req.Emoji == "" && strings.HasPrefix(k, req.ChatID+"/"+req.MessageID+"/")) {
				evs = append(evs, ev)
				delete(a.reacted, k)
			}
		}
		a.mu.Unlock()
		for _, ev := range evs {
			if err := a.call(ctx, func(ctx context.Context) error { _, err := cli.RedactEvent(ctx, room, ev); return err }); err != nil {
				return sendError(err)
			}
		}
		return nil
	}
	c := &event.ReactionEventContent{RelatesTo: event.RelatesTo{Type: event.RelAnnotation, EventID: id.EventID(req.MessageID), Key: req.Emoji}}
	ev, err := a.sendEvent(ctx, cli, room, event.EventReaction, c)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.reacted[key] = ev
	a.mu.Unlock()
	return nil
}

// SetTyping implements channel.Typer.
func (a *Adapter) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	cli := a.client()
	if cli == nil {
		return nil
	}
	return a.call(ctx, func(ctx context.Context) error {
		_, err := cli.UserTyping(ctx, id.RoomID(req.ChatID), req.On, typingLifetime)
		return err
	})
}
