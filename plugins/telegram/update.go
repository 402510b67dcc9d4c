package telegram

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// update is one getUpdates result. tgbotapi.Update predates forum topics, so
// the plugin decodes its own envelope around tgbotapi.Message. Update kinds
// other than these five (reactions, member changes, …) are not requested
// and ignored if they arrive.
type update struct {
	UpdateID          int            `json:"update_id"`
	Message           *message       `json:"message,omitempty"`
	EditedMessage     *message       `json:"edited_message,omitempty"`
	ChannelPost       *message       `json:"channel_post,omitempty"`
	EditedChannelPost *message       `json:"edited_channel_post,omitempty"`
	CallbackQuery     *callbackQuery `json:"callback_query,omitempty"`
}

// allowedUpdates is the allowed_updates parameter of getUpdates/setWebhook.
const allowedUpdates = `["message","edited_message","channel_post","edited_channel_post","callback_query"]`

// callbackQuery is a press of an inline keyboard button: tgbotapi's
// CallbackQuery with the message decoded as ours (forum topics).
type callbackQuery struct {
	ID   string         `json:"id"`
	From *tgbotapi.User `json:"from"`
	// Message is the bot's message the button was under; nil for messages
	// sent in inline mode (InlineMessageID instead). When the message is
	// too old Telegram sends only its chat and id (date 0).
	Message         *message `json:"message,omitempty"`
	InlineMessageID string   `json:"inline_message_id,omitempty"`
	// Data is the button's callback_data; empty for a game's button.
	Data          string `json:"data,omitempty"`
	GameShortName string `json:"game_short_name,omitempty"`
}

// message is tgbotapi.Message plus the forum-topic fields of Bot API 6.3
// and the forward origin of Bot API 7.0.
type message struct {
	tgbotapi.Message
	MessageThreadID int            `json:"message_thread_id,omitempty"`
	IsTopicMessage  bool           `json:"is_topic_message,omitempty"`
	ForwardOrigin   *messageOrigin `json:"forward_origin,omitempty"`
}

// messageOrigin is Bot API 7.0's MessageOrigin: where a forwarded message
// came from. Type is "user", "hidden_user", "chat" or "channel".
type messageOrigin struct {
	Type           string         `json:"type"`
	Date           int64          `json:"date"`
	SenderUser     *tgbotapi.User `json:"sender_user,omitempty"`
	SenderUserName string         `json:"sender_user_name,omitempty"`
	SenderChat     *tgbotapi.Chat `json:"sender_chat,omitempty"`
	Chat           *tgbotapi.Chat `json:"chat,omitempty"`
}

// forwardOf describes where m was forwarded from, or nil when it was not:
// forward_origin (Bot API 7.0), else the forward_* fields that preceded it.
func forwardOf(m *message) *channel.Forward {
	if o := m.ForwardOrigin; o != nil {
		f := &channel.Forward{}
		if o.Date != 0 {
			f.Date = time.Unix(o.Date, 0).UTC()
		}
		switch {
		case o.SenderUser != nil:
			f.From = fullName(o.SenderUser.FirstName, o.SenderUser.LastName)
		case o.SenderUserName != "":
			f.From = o.SenderUserName
		case o.SenderChat != nil:
			f.From = o.SenderChat.Title
		case o.Chat != nil:
			f.From = o.Chat.Title
		}
		return f
	}
	if m.ForwardDate == 0 && m.ForwardFrom == nil && m.ForwardFromChat == nil && m.ForwardSenderName == "" {
		return nil
	}
	f := &channel.Forward{From: m.ForwardSenderName}
	if m.ForwardDate != 0 {
		f.Date = time.Unix(int64(m.ForwardDate), 0).UTC()
	}
	switch {
	case m.ForwardFrom != nil:
		f.From = fullName(m.ForwardFrom.FirstName, m.ForwardFrom.LastName)
	case m.ForwardFromChat != nil:
		f.From = m.ForwardFromChat.Title
	}
	return f
}

// self is the bot's identity from getMe, used for mention detection.
type self struct {
	ID       int64
	Username string
}

// decodeUpdate decodes one raw update. An update whose message does not
// decode (a field whose type changed in a newer Bot API) still yields its
// update_id, so the offset can move past it.
func decodeUpdate(raw json.RawMessage) (update, error) {
	var u update
	if err := json.Unmarshal(raw, &u); err != nil {
		var id struct {
			UpdateID int `json:"update_id"`
		}
		_ = json.Unmarshal(raw, &id)
		return update{UpdateID: id.UpdateID}, err
	}
	return u, nil
}

// updateKinds lists the fields of a raw update other than update_id (its
// kind, e.g. "message" or "message_reaction"), for log lines.
func updateKinds(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "?"
	}
	kinds := make([]string, 0, len(m))
	for k := range m {
		if k != "update_id" {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ",")
}

// toInbound maps an update to an InboundMessage. ok is false for updates
// that carry nothing for the agent:
//
//   - update kinds other than (edited) messages and channel posts;
//   - service messages and anything else without text, caption or media;
//   - commands addressed to another bot ("/start@otherbot").
//
// Edited messages and channel posts are delivered with Edited set: the host
// decides what an edit means (its dedupe key includes the flag, or it drops
// them); the plugin translates, nothing more.
func toInbound(u update, me self) (channel.InboundMessage, bool) {
	m, edited := messageOf(u)
	if m == nil || m.Chat == nil {
		return channel.InboundMessage{}, false
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	media := mediaOf(m)
	if strings.TrimSpace(text) == "" && len(media) == 0 {
		return channel.InboundMessage{}, false
	}
	in := channel.InboundMessage{
		ChatID:    strconv.FormatInt(m.Chat.ID, 10),
		MessageID: strconv.Itoa(m.MessageID),
		Text:      text,
		Media:     media,
		Timestamp: time.Unix(int64(m.Date), 0).UTC(),
		ChatTitle: m.Chat.Title,
		Edited:    edited,
	}
	if edited && m.EditDate != 0 {
		in.Timestamp = time.Unix(int64(m.EditDate), 0).UTC()
	}
	in.ChatType = chatTypeOf(m.Chat.Type)
	in.ThreadID = threadOf(m)
	in.Sender = senderOf(m)
	in.Forward = forwardOf(m)
	if in.ReplyTo = replyToOf(m, me); in.ReplyTo != nil && in.ReplyTo.ToBot {
		in.WasMentioned = true
	}
	if !applyEntities(&in, text, entities, me) {
		return channel.InboundMessage{}, false // a command for another bot
	}
	return in, true
}

// pressOf maps a callback query, received at now, to the InboundMessage of
// a button press (with Action set). ok is false for queries that are not a
// press of a button under one of the bot's messages: from inline mode (no
// message) or a game (no data).
//
// MessageID is "cb:" + the query id, unique per press, so the host's
// dedupe never merges two presses of the same button. Text is the
// pressed button's label as the message's keyboard shows it, or the data
// when the keyboard is not there (a message too old to be sent along).
// The press is addressed to the bot, so WasMentioned is set.
func pressOf(q *callbackQuery, now time.Time) (channel.InboundMessage, bool) {
	m := q.Message
	if m == nil || m.Chat == nil || q.Data == "" || q.ID == "" || q.From == nil {
		return channel.InboundMessage{}, false
	}
	in := channel.InboundMessage{
		ChatType:     chatTypeOf(m.Chat.Type),
		ChatID:       strconv.FormatInt(m.Chat.ID, 10),
		MessageID:    "cb:" + q.ID,
		Text:         buttonLabel(m, q.Data),
		WasMentioned: true,
		Timestamp:    now.UTC(),
		ChatTitle:    m.Chat.Title,
		ThreadID:     threadOf(m),
		Sender:       userSender(q.From),
		Action:       &channel.Action{ButtonID: q.Data, MessageID: strconv.Itoa(m.MessageID)},
	}
	return in, true
}

// buttonLabel is the text of the button with callback_data data under m,
// or data itself when m's keyboard has none.
func buttonLabel(m *message, data string) string {
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if b.CallbackData != nil && *b.CallbackData == data && b.Text != "" {
					return b.Text
				}
			}
		}
	}
	return data
}

// messageOf picks the message an update carries and whether it is an edit;
// m is nil for other update kinds.
func messageOf(u update) (m *message, edited bool) {
	switch {
	case u.Message != nil:
		return u.Message, false
	case u.EditedMessage != nil:
		return u.EditedMessage, true
	case u.ChannelPost != nil:
		return u.ChannelPost, false
	case u.EditedChannelPost != nil:
		return u.EditedChannelPost, true
	default:
		return nil, false
	}
}

// chatTypeOf maps Telegram's chat type to the channel's.
func chatTypeOf(t string) channel.ChatType {
	switch t {
	case "private":
		return channel.ChatDirect
	case "channel":
		return channel.ChatChannel
	default: // group, supergroup
		return channel.ChatGroup
	}
}

// threadOf is the forum topic of m, "" when it is not in one.
func threadOf(m *message) string {
	if m.IsTopicMessage && m.MessageThreadID != 0 {
		return strconv.Itoa(m.MessageThreadID)
	}
	return ""
}

// replyToOf describes the message m replies to, or returns nil when m is not
// a reply. ToBot is set when the replied-to message is the bot's own.
func replyToOf(m *message, me self) *channel.ReplyTo {
	r := m.ReplyToMessage
	if r == nil || (m.IsTopicMessage && r.MessageID == m.MessageThreadID) {
		// In a forum topic every message "replies" to the topic's creation
		// message; that is not a reply.
		return nil
	}
	rt := &channel.ReplyTo{
		MessageID: strconv.Itoa(r.MessageID),
		Text:      r.Text,
	}
	if rt.Text == "" {
		rt.Text = r.Caption
	}
	if r.From != nil {
		rt.SenderID = strconv.FormatInt(r.From.ID, 10)
		rt.SenderName = fullName(r.From.FirstName, r.From.LastName)
		rt.ToBot = me.ID != 0 && r.From.ID == me.ID
	} else if r.SenderChat != nil {
		rt.SenderID = strconv.FormatInt(r.SenderChat.ID, 10)
		rt.SenderName = r.SenderChat.Title
	}
	return rt
}

// applyEntities reads text's entities: a mention of the bot (by username or
// text_mention) sets WasMentioned; a leading "/cmd@bot" addressed to this bot
// sets WasMentioned and CommandText. It returns false when the leading
// command is addressed to another bot.
func applyEntities(in *channel.InboundMessage, text string, entities []tgbotapi.MessageEntity, me self) bool {
	units := utf16.Encode([]rune(text))
	for _, e := range entities {
		if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(units) {
			continue
		}
		part := string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
		switch e.Type {
		case "mention":
			if me.Username != "" && strings.EqualFold(part, "@"+me.Username) {
				in.WasMentioned = true
			}
		case "text_mention":
			if e.User != nil && me.ID != 0 && e.User.ID == me.ID {
				in.WasMentioned = true
			}
		case "bot_command":
			if e.Offset != 0 {
				continue
			}
			cmd, target, addressed := strings.Cut(part, "@")
			if !addressed {
				continue
			}
			if me.Username == "" || !strings.EqualFold(target, me.Username) {
				return false
			}
			in.WasMentioned = true
			in.CommandText = cmd + string(utf16.Decode(units[e.Offset+e.Length:]))
		}
	}
	return true
}

func senderOf(m *message) channel.Sender {
	switch {
	case m.From != nil && !(m.SenderChat != nil && m.From.UserName == "GroupAnonymousBot"):
		return userSender(m.From)
	case m.SenderChat != nil:
		// Channel posts and anonymous group admins speak as a chat.
		return channel.Sender{ID: strconv.FormatInt(m.SenderChat.ID, 10), Name: m.SenderChat.Title, Username: m.SenderChat.UserName}
	default:
		return channel.Sender{ID: strconv.FormatInt(m.Chat.ID, 10), Name: m.Chat.Title, Username: m.Chat.UserName}
	}
}

// userSender is the Sender of a Telegram user.
func userSender(u *tgbotapi.User) channel.Sender {
	return channel.Sender{
		ID:       strconv.FormatInt(u.ID, 10),
		Name:     fullName(u.FirstName, u.LastName),
		Username: u.UserName,
		IsBot:    u.IsBot,
	}
}

func fullName(first, last string) string {
	return strings.TrimSpace(first + " " + last)
}

// mediaOf lists a message's attachments; Ref is the file_id. Of a photo the
// largest size is taken.
func mediaOf(m *message) []channel.Media {
	var out []channel.Media
	add := func(kind channel.MediaKind, id, mime, name string, size int) {
		if id != "" {
			out = append(out, channel.Media{Kind: kind, Ref: id, MIME: mime, Filename: name, Size: int64(size), Caption: m.Caption})
		}
	}
	if len(m.Photo) > 0 {
		best := m.Photo[0]
		for _, p := range m.Photo[1:] {
			if p.FileSize > best.FileSize || (p.FileSize == best.FileSize && p.Width*p.Height > best.Width*best.Height) {
				best = p
			}
		}
		add(channel.MediaImage, best.FileID, "image/jpeg", "", best.FileSize)
	}
	if d := m.Document; d != nil {
		kind := channel.MediaDocument
		if m.Animation != nil {
			kind = channel.MediaVideo
		}
		add(kind, d.FileID, d.MimeType, d.FileName, d.FileSize)
	}
	if v := m.Voice; v != nil {
		add(channel.MediaVoice, v.FileID, v.MimeType, "", v.FileSize)
	}
	if a := m.Audio; a != nil {
		add(channel.MediaAudio, a.FileID, a.MimeType, a.FileName, a.FileSize)
	}
	if v := m.Video; v != nil {
		add(channel.MediaVideo, v.FileID, v.MimeType, v.FileName, v.FileSize)
	}
	if v := m.VideoNote; v != nil {
		add(channel.MediaVideo, v.FileID, "video/mp4", "", v.FileSize)
	}
	if s := m.Sticker; s != nil {
		mime := "image/webp"
		if s.IsAnimated {
			mime = "application/x-tgsticker"
		}
		add(channel.MediaSticker, s.FileID, mime, "", s.FileSize)
	}
	return out
}
