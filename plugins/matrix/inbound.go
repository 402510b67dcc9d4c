package matrix

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// noteState forgets what is cached of a room when its members or name
// change.
func (a *Adapter) noteState(room id.RoomID, evt *event.Event) {
	if evt.Type == event.StateMember || evt.Type == event.StateRoomName {
		a.mu.Lock()
		delete(a.rooms, room)
		a.mu.Unlock()
	}
}

// room is what is known of a room: its joined members and name (asked
// once, until they change).
func (a *Adapter) room(ctx context.Context, cli *mautrix.Client, room id.RoomID) roomInfo {
	a.mu.Lock()
	ri, ok := a.rooms[room]
	a.mu.Unlock()
	if ok {
		return *ri
	}
	ri = &roomInfo{}
	if err := a.call(ctx, func(ctx context.Context) error {
		m, err := cli.JoinedMembers(ctx, room)
		if err == nil {
			ri.members = len(m.Joined)
		}
		return err
	}); err != nil {
		a.log.Debug("could not list the room's members", "room", room, "err", err)
	}
	var name event.RoomNameEventContent
	if cli.StateEvent(ctx, room, event.StateRoomName, "", &name) == nil {
		ri.name = name.Name
	}
	a.mu.Lock()
	a.rooms[room] = ri
	a.mu.Unlock()
	return *ri
}

// chatType is a room's kind: direct for two members (the bot and one
// person), else group.
func (a *Adapter) chatType(ctx context.Context, cli *mautrix.Client, room id.RoomID) channel.ChatType {
	if a.room(ctx, cli, room).members <= 2 {
		return channel.ChatDirect
	}
	return channel.ChatGroup
}

// inbound is the message of evt, or false when evt is not one for the
// host (the bot's own, not a message, a notice).
func (a *Adapter) inbound(ctx context.Context, cli *mautrix.Client, evt *event.Event) (channel.InboundMessage, bool) {
	if evt.Sender == cli.UserID || evt.Type != event.EventMessage {
		return channel.InboundMessage{}, false
	}
	if err := parse(evt); err != nil {
		a.log.Debug("an event that does not parse", "event", evt.ID, "err", err)
		return channel.InboundMessage{}, false
	}
	c := evt.Content.AsMessage()
	if c == nil || c.MsgType == event.MsgNotice {
		return channel.InboundMessage{}, false
	}
	ri := a.room(ctx, cli, evt.RoomID)
	m := channel.InboundMessage{
		ChatType:  channel.ChatGroup,
		ChatID:    evt.RoomID.String(),
		MessageID: evt.ID.String(),
		Sender:    channel.Sender{ID: evt.Sender.String(), Name: evt.Sender.Localpart(), Username: evt.Sender.String()},
		Text:      c.Body,
		Timestamp: time.UnixMilli(evt.Timestamp),
		ChatTitle: ri.name,
		Media:     media(c),
	}
	if len(m.Media) > 0 {
		m.Text = m.Media[0].Caption
	}
	if ri.members <= 2 {
		m.ChatType = channel.ChatDirect
	}
	rel := c.RelatesTo
	if rel != nil && rel.Type == event.RelReplace {
		// An edit: the new text is the message's.
		m.Edited = true
		if c.NewContent != nil {
			m.Text = c.NewContent.Body
		}
	}
	if t := rel.GetThreadParent(); t != "" {
		m.ThreadID = t.String()
	}
	if r := rel.GetNonFallbackReplyTo(); r != "" {
		m.ReplyTo = &channel.ReplyTo{MessageID: r.String()}
		m.ReplyTo.ToBot = a.isOwn(r)
	}
	m.Text = stripReplyFallback(m.Text)
	if act, ok := a.numbered(evt, m.Text, rel.GetNonFallbackReplyTo()); ok {
		act.ChatType, act.ThreadID, act.Timestamp = m.ChatType, m.ThreadID, m.Timestamp
		return act, true
	}
	m.WasMentioned = a.mentioned(cli, c, m.Text) || (m.ReplyTo != nil && m.ReplyTo.ToBot)
	return m, true
}

// mentioned: m.mentions names the bot, or the text its id or display
// name, as a whole word ("Claw Bot" in "hi claw bot," but not in "claw
// botany").
func (a *Adapter) mentioned(cli *mautrix.Client, c *event.MessageEventContent, text string) bool {
	if c.Mentions != nil {
		for _, u := range c.Mentions.UserIDs {
			if u == cli.UserID {
				return true
			}
		}
	}
	a.mu.Lock()
	name := a.name
	a.mu.Unlock()
	low := strings.ToLower(text)
	return containsWord(low, strings.ToLower(cli.UserID.String())) ||
		(strings.TrimSpace(name) != "" && containsWord(low, strings.ToLower(strings.TrimSpace(name))))
}

// containsWord reports whether w occurs in s with neither a letter nor a
// digit right before or after it.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		i = start + 1
	}
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// stripReplyFallback drops the "> <@user> quoted" lines older clients put
// before a reply's text.
func stripReplyFallback(s string) string {
	if !strings.HasPrefix(s, "> <") {
		return s
	}
	lines := strings.Split(s, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], ">") {
		i++
	}
	if i < len(lines) && lines[i] == "" {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

// parse parses evt's content unless it is already (a decrypted event's).
func parse(evt *event.Event) error {
	if evt.Content.Parsed != nil {
		return nil
	}
	return evt.Content.ParseRaw(evt.Type)
}
