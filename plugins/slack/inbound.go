package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
)

// eventCallback is the part of an Events API payload (event_callback,
// the same in Socket Mode and over HTTP) the plugin reads.
type eventCallback struct {
	Type    string     `json:"type"`
	EventID string     `json:"event_id"`
	Event   innerEvent `json:"event"`
}

// innerEvent is a message or app_mention event.
type innerEvent struct {
	Type        string       `json:"type"`
	Subtype     string       `json:"subtype"`
	User        string       `json:"user"`
	BotID       string       `json:"bot_id"`
	Text        string       `json:"text"`
	TS          string       `json:"ts"`
	ThreadTS    string       `json:"thread_ts"`
	Channel     string       `json:"channel"`
	ChannelType string       `json:"channel_type"`
	Hidden      bool         `json:"hidden"`
	Files       []slack.File `json:"files"`
}

// onEventCallback maps one event_callback payload and hands what it
// carries to the host. nil: the host stored it, or there was nothing for
// the host (acknowledge it); an error: the host did not take it (leave it
// unacknowledged, Slack sends it again).
func (a *Adapter) onEventCallback(ctx context.Context, inbox channel.Inbox, raw json.RawMessage) error {
	var cb eventCallback
	if err := json.Unmarshal(raw, &cb); err != nil {
		a.log.Warn("skipping an event that does not decode", "error", err)
		return nil
	}
	in, ok := a.toInbound(ctx, cb.Event)
	if !ok {
		return nil
	}
	return inbox.Deliver(ctx, in)
}

// Message subtypes that are a person's message; others (joins, edits,
// deletions, bot messages, topic changes) are not for the agent.
var personSubtypes = map[string]bool{"": true, "file_share": true, "thread_broadcast": true}

// toInbound maps a message or app_mention event; false means nothing for
// the agent (the bot's own, another bot's, an edit, a system message, an
// empty one).
//
// The same message arrives twice when the app subscribes to both
// app_mention and message.channels: both map to the same MessageID (the
// message's ts), and the host drops the second.
func (a *Adapter) toInbound(ctx context.Context, ev innerEvent) (channel.InboundMessage, bool) {
	me := a.me.Load()
	if me == nil || (ev.Type != "message" && ev.Type != "app_mention") || !personSubtypes[ev.Subtype] ||
		ev.Hidden || ev.BotID != "" || ev.User == "" || ev.User == me.UserID || ev.Channel == "" || ev.TS == "" {
		return channel.InboundMessage{}, false
	}
	in := channel.InboundMessage{
		ChatType:  channel.ChatGroup,
		ChatID:    ev.Channel,
		MessageID: ev.TS,
		Sender:    channel.Sender{ID: ev.User, Name: ev.User},
		Timestamp: tsTime(ev.TS),
	}
	if ev.ChannelType == "im" || (ev.ChannelType == "" && strings.HasPrefix(ev.Channel, "D")) {
		in.ChatType = channel.ChatDirect
	}
	if ev.ThreadTS != "" && ev.ThreadTS != ev.TS {
		in.ThreadID = ev.ThreadTS
	}
	if n := a.userName(ctx, ev.User); n != "" {
		in.Sender.Name = n
	}
	if in.ChatType == channel.ChatGroup {
		in.ChatTitle = a.channelName(ctx, ev.Channel)
	}
	mentioned := ev.Type == "app_mention" || strings.Contains(ev.Text, "<@"+me.UserID+">") ||
		strings.Contains(ev.Text, "<@"+me.UserID+"|")
	// A thread the bot answered in is a conversation with it.
	if in.ThreadID != "" && a.inThread(ev.Channel, in.ThreadID) {
		mentioned = true
	}
	in.Text = a.plainText(ctx, ev.Text, me, false)
	if cmd := a.plainText(ctx, ev.Text, me, true); cmd != in.Text {
		in.CommandText = cmd
	}
	in.WasMentioned = mentioned
	for _, f := range ev.Files {
		ref := f.URLPrivateDownload
		if ref == "" {
			ref = f.URLPrivate
		}
		if ref == "" {
			continue
		}
		in.Media = append(in.Media, channel.Media{Kind: channel.MediaKindOf(f.Mimetype), Ref: ref, MIME: f.Mimetype,
			Size: int64(f.Size), Filename: f.Name})
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Media) == 0 {
		return channel.InboundMessage{}, false
	}
	if in.ThreadID != "" {
		// What the thread hangs from, for its session's first turn.
		in.ThreadContext = a.threadContext(ctx, ev.Channel, in.ThreadID, ev.TS)
	}
	if a.cfg.ReplyInThread && in.ChatType == channel.ChatGroup && in.ThreadID == "" && mentioned {
		in.ThreadID = ev.TS
	}
	return in, true
}

// tsTime is the time of a Slack ts ("1700000000.000100").
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}

// controlRE matches Slack's control sequences: <@U…>, <@U…|name>,
// <#C…|name>, <!here>, <!subteam^S…|@team>, <url|label>, <url>.
var controlRE = regexp.MustCompile(`<([^<>]*)>`)

// plainText turns Slack's message text into what a person reads: users as
// @name, channels as #name, links as "label (url)", entities decoded.
// command drops the bot's own mention (CommandText).
func (a *Adapter) plainText(ctx context.Context, s string, me *identity, command bool) string {
	out := controlRE.ReplaceAllStringFunc(s, func(m string) string {
		body := m[1 : len(m)-1]
		ref, label, _ := strings.Cut(body, "|")
		switch {
		case strings.HasPrefix(ref, "@"):
			id := ref[1:]
			if id == me.UserID {
				if command {
					return ""
				}
				return "@" + me.Name
			}
			if label != "" {
				return "@" + label
			}
			if n := a.userName(ctx, id); n != "" {
				return "@" + n
			}
			return "@" + id
		case strings.HasPrefix(ref, "#"):
			if label != "" {
				return "#" + label
			}
			return ref
		case strings.HasPrefix(ref, "!"):
			if label != "" {
				return label
			}
			name, _, _ := strings.Cut(ref[1:], "^")
			return "@" + name
		case label != "" && label != ref:
			return label + " (" + ref + ")"
		}
		return ref
	})
	out = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(out)
	if command {
		out = strings.Join(strings.Fields(out), " ")
	}
	return out
}

// onInteraction handles an interaction: a press of one of the host's
// buttons (block_actions) becomes an InboundMessage — MessageID
// "act:<action_ts>", the button's label as text, the presser as sender,
// the button and its message as the Action — and is acknowledged once the
// host stored it or at ackWait, whichever comes first (Slack wants the
// acknowledgement within 3 s; Slack does not send a press again). Other
// interactions are acknowledged and skipped.
func (a *Adapter) onInteraction(ctx context.Context, inbox channel.Inbox, cb slack.InteractionCallback, ack func()) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 || cb.User.ID == "" {
		ack()
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	chatID := cb.Channel.ID
	if chatID == "" {
		chatID = cb.Container.ChannelID
	}
	msgTS := cb.Message.Timestamp
	if msgTS == "" {
		msgTS = cb.Container.MessageTs
	}
	if chatID == "" || msgTS == "" || act.ActionID == "" {
		ack()
		return
	}
	stamp := act.ActionTs
	if stamp == "" {
		stamp = cb.ActionTs
	}
	if stamp == "" {
		stamp = cb.TriggerID
	}
	in := channel.InboundMessage{
		ChatType:     channel.ChatGroup,
		ChatID:       chatID,
		MessageID:    "act:" + stamp,
		Sender:       channel.Sender{ID: cb.User.ID, Name: cb.User.Name, Username: cb.User.Name},
		Text:         act.Text.Text,
		WasMentioned: true,
		Timestamp:    tsTime(stamp),
		Action:       &channel.Action{ButtonID: act.ActionID, MessageID: msgTS},
	}
	if in.Timestamp.IsZero() {
		in.Timestamp = time.Now()
	}
	if in.Text == "" {
		in.Text = act.ActionID
	}
	if strings.HasPrefix(chatID, "D") {
		in.ChatType = channel.ChatDirect
	}
	if th := cb.Message.ThreadTimestamp; th != "" && th != msgTS {
		in.ThreadID = th
	} else if th := cb.Container.ThreadTs; th != "" && th != msgTS {
		in.ThreadID = th
	}
	a.deliverAcked(ctx, inbox, in, ack)
}

// onSlashCommand handles the configured slash command: "/claw new" is
// delivered as "/new" ("/claw" alone as "/help") from the channel it was
// typed in, acknowledged (nothing visible) once the host stored it or at
// ackWait. The answer is posted in the channel like any reply.
func (a *Adapter) onSlashCommand(ctx context.Context, inbox channel.Inbox, cmd slack.SlashCommand, ack func()) {
	want := *a.cfg.SlashCommand
	if want == "" || cmd.Command != want || cmd.UserID == "" || cmd.ChannelID == "" {
		a.log.Debug("skipping a slash command", "command", cmd.Command)
		ack()
		return
	}
	text := strings.TrimSpace(cmd.Text)
	switch {
	case text == "":
		text = "/help"
	case !strings.HasPrefix(text, "/"):
		text = "/" + text
	}
	id := cmd.TriggerID
	if id == "" {
		id = fmt.Sprintf("%d", time.Now().UnixNano())
	}
	in := channel.InboundMessage{
		ChatType:     channel.ChatGroup,
		ChatID:       cmd.ChannelID,
		MessageID:    "cmd:" + id,
		Sender:       channel.Sender{ID: cmd.UserID, Name: cmd.UserName, Username: cmd.UserName},
		Text:         text,
		WasMentioned: true,
		Timestamp:    time.Now(),
	}
	if strings.HasPrefix(cmd.ChannelID, "D") {
		in.ChatType = channel.ChatDirect
	}
	if n := a.userName(ctx, cmd.UserID); n != "" {
		in.Sender.Name = n
	}
	a.deliverAcked(ctx, inbox, in, ack)
}

// deliverAcked hands in to the host and acknowledges it once stored, or
// at ackWait when the host takes longer (the acknowledgement is due
// within 3 s; in still reaches the host).
func (a *Adapter) deliverAcked(ctx context.Context, inbox channel.Inbox, in channel.InboundMessage, ack func()) {
	var once sync.Once
	t := time.AfterFunc(a.ackWait, func() { once.Do(ack) })
	err := inbox.Deliver(ctx, in)
	t.Stop()
	if err != nil && ctx.Err() == nil {
		a.log.Warn("host did not take an interaction", "error", err)
	}
	once.Do(ack)
}
