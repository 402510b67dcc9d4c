package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Send implements channel.Channel.
//
// Without media, the text is one sendMessage. With media, each file is a
// multipart upload from its local path: images with sendPhoto (as a
// document when larger than a photo may be, or when Telegram refuses it as
// a photo), everything else with sendDocument. The text becomes the caption
// of the first file when that file has no caption of its own and the text
// fits a caption (1024 UTF-16 units); otherwise it is sent first, as its own
// message. A file caption too long for a caption follows its file as a
// message. Only the first message replies to ReplyToMessageID.
//
// Buttons become an inline keyboard (reply_markup) under the last message
// posted: the text message, or the last file (or the message carrying its
// too long caption). A button's ID is its callback_data, which Telegram
// takes only with 1-64 bytes: other IDs, and blank labels, are refused
// with invalid_request before any request.
//
// Markdown becomes Telegram HTML (markup.HTMLSubset). If Telegram refuses
// the HTML ("can't parse entities"), the plugin itself resends the visible
// text without parse_mode (it never returns formatting_rejected). A text
// whose visible length (plain text: its length) exceeds the limit is
// refused with message_too_long before any request: the host splits by
// that measure, and the plugin never sends more than
// Capabilities().MaxTextLength.
//
// On failure the response lists the messages already posted and the error
// is a *channel.Error.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	var resp channel.SendResponse
	if a.api == nil {
		return resp, channel.Errorf(channel.CodeInternal, "send before configure")
	}
	base, err := a.baseParams(req.ChatID, req.ThreadID)
	if err != nil {
		return resp, err
	}
	if req.Silent {
		base["disable_notification"] = "true"
	}
	reply := req.ReplyToMessageID
	if reply != "" {
		if _, err := strconv.Atoi(reply); err != nil {
			return resp, channel.Errorf(channel.CodeInvalidRequest, "reply_to message id %q is not a Telegram message id", reply)
		}
	}
	replyParams := func(p tgbotapi.Params) {
		if reply != "" {
			p["reply_parameters"] = fmt.Sprintf(`{"message_id":%s,"allow_sending_without_reply":true}`, reply)
			reply = ""
		}
	}
	hasText := strings.TrimSpace(req.Text) != ""
	if !hasText && len(req.Media) == 0 {
		return resp, channel.Errorf(channel.CodeInvalidRequest, "nothing to send: empty text and no media")
	}
	for _, m := range req.Media {
		if err := checkMedia(m); err != nil {
			return resp, err
		}
	}
	keyboard, err := inlineKeyboard(req.Buttons)
	if err != nil {
		return resp, err
	}
	textAsCaption := hasText && len(req.Media) > 0 && strings.TrimSpace(req.Media[0].Caption) == "" &&
		fitsCaption(req.Text, req.Format, req.Rendered)
	if hasText && !textAsCaption {
		p := clone(base)
		replyParams(p)
		if a.cfg.DisableWebPagePreview || req.DisableLinkPreview {
			p["link_preview_options"] = `{"is_disabled":true}`
		}
		if keyboard != "" && len(req.Media) == 0 {
			p["reply_markup"] = keyboard
		}
		id, err := a.sendText(ctx, "sendMessage", p, req.Text, req.Format, req.Rendered)
		if err != nil {
			return resp, err
		}
		resp.MessageIDs = append(resp.MessageIDs, id)
	}
	for i, m := range req.Media {
		p := clone(base)
		replyParams(p)
		caption, pre := m.Caption, m.CaptionRendered
		if i == 0 && textAsCaption {
			caption, pre = req.Text, req.Rendered
		}
		last := ""
		if i == len(req.Media)-1 {
			last = keyboard
		}
		ids, err := a.sendMedia(ctx, p, m, caption, pre, req.Format, last)
		resp.MessageIDs = append(resp.MessageIDs, ids...)
		if err != nil {
			return resp, err
		}
	}
	return resp, nil
}

// inlineKeyboard is the reply_markup of buttons: "" when there are none
// (empty rows are dropped).
func inlineKeyboard(rows [][]channel.Button) (string, error) {
	var kb tgbotapi.InlineKeyboardMarkup
	for i, row := range rows {
		var out []tgbotapi.InlineKeyboardButton
		for j, b := range row {
			switch {
			case b.ID == "":
				return "", channel.Errorf(channel.CodeInvalidRequest, "button %d.%d (%q) has an empty id", i+1, j+1, b.Label)
			case len(b.ID) > channel.MaxButtonID:
				return "", channel.Errorf(channel.CodeInvalidRequest, "button %d.%d (%q): its id is %d bytes, Telegram takes at most %d",
					i+1, j+1, b.Label, len(b.ID), channel.MaxButtonID)
			case !utf8.ValidString(b.ID):
				return "", channel.Errorf(channel.CodeInvalidRequest, "button %d.%d (%q): its id is not UTF-8", i+1, j+1, b.Label)
			case strings.TrimSpace(b.Label) == "":
				return "", channel.Errorf(channel.CodeInvalidRequest, "button %d.%d (id %q) has an empty label", i+1, j+1, b.ID)
			}
			out = append(out, tgbotapi.NewInlineKeyboardButtonData(b.Label, b.ID))
		}
		if len(out) > 0 {
			kb.InlineKeyboard = append(kb.InlineKeyboard, out)
		}
	}
	if len(kb.InlineKeyboard) == 0 {
		return "", nil
	}
	b, err := json.Marshal(kb)
	if err != nil {
		return "", channel.Errorf(channel.CodeInternal, "encode buttons: %v", err)
	}
	return string(b), nil
}

func clone(p tgbotapi.Params) tgbotapi.Params {
	out := make(tgbotapi.Params, len(p)+4)
	for k, v := range p {
		out[k] = v
	}
	return out
}

func (a *Adapter) baseParams(chatID, threadID string) (tgbotapi.Params, error) {
	if chatID == "" {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "chat id is empty")
	}
	p := tgbotapi.Params{"chat_id": chatID}
	if threadID != "" {
		if _, err := strconv.Atoi(threadID); err != nil {
			return nil, channel.Errorf(channel.CodeInvalidRequest, "thread id %q is not a Telegram topic id", threadID)
		}
		p["message_thread_id"] = threadID
	}
	return p, nil
}

func (a *Adapter) textLimit() int {
	if a.cfg.TextLimit > 0 {
		return int(a.cfg.TextLimit)
	}
	return MaxTextLength
}

// rendering is one way of sending a text: with parse_mode HTML or plain.
type rendering struct {
	text, parseMode string
}

// renderings lists the ways to send text within limit, best first: for
// markdown the host's HTML of it (pre: SendRequest.Rendered, made with
// markup.HTMLSubset), then its visible text without markup, should
// Telegram refuse the HTML; plain text as it is, and markdown the host
// sent no rendering of (the plugin links no markdown parser). ok is false
// when the text does not fit: the host split it to the limit measured so
// (markup.Split), so that is a text longer than declared; n is its
// measure.
func renderings(text string, format channel.Format, limit int, pre *channel.Rendered) ([]rendering, int, bool) {
	if html, vis, ok := pre.Of(channel.MarkupHTMLSubset); ok && format == channel.FormatMarkdown && strings.TrimSpace(vis) != "" {
		if n := channel.TextLen(vis, channel.LengthUTF16); n > limit {
			return nil, n, false
		}
		return []rendering{{html, "HTML"}, {vis, ""}}, 0, true
	}
	if n := channel.TextLen(text, channel.LengthUTF16); n > limit {
		return nil, n, false
	}
	return []rendering{{text, ""}}, 0, true
}

// fitsCaption reports whether text (rendered as pre) can be sent as a
// media caption.
func fitsCaption(text string, format channel.Format, pre *channel.Rendered) bool {
	_, _, ok := renderings(strings.TrimSpace(text), format, maxCaptionLength, pre)
	return ok
}

// sendText posts text with method (sendMessage or editMessageText) and
// returns the message id. It tries HTML first for markdown and falls back
// to plain text when Telegram refuses the HTML. pre, when not nil, is the
// host's rendering of text (see renderings).
func (a *Adapter) sendText(ctx context.Context, method string, p tgbotapi.Params, text string, format channel.Format, pre *channel.Rendered) (string, error) {
	limit := a.textLimit()
	rs, n, ok := renderings(text, format, limit, pre)
	if !ok {
		return "", channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units once rendered, the limit is %d", n, limit)
	}
	var err error
	for _, r := range rs {
		p["text"] = r.text
		delete(p, "parse_mode")
		if r.parseMode != "" {
			p["parse_mode"] = r.parseMode
		}
		var id string
		id, err = a.postText(ctx, method, p)
		if channel.CodeOf(err) != channel.CodeFormattingRejected || r.parseMode == "" {
			return id, err
		}
		a.log.Debug("telegram refused the HTML; sending plain text", "method", method, "error", err)
	}
	return "", err
}

func (a *Adapter) postText(ctx context.Context, method string, p tgbotapi.Params) (string, error) {
	raw, err := a.callTimeout(ctx, method, p, callTimeout)
	if err != nil {
		return "", toChannelError("send", err)
	}
	return messageID(raw), nil
}

// messageID reads message_id from a Message result ("" for true).
func messageID(raw json.RawMessage) string {
	var m struct {
		MessageID int `json:"message_id"`
	}
	if json.Unmarshal(raw, &m) != nil || m.MessageID == 0 {
		return ""
	}
	return strconv.Itoa(m.MessageID)
}

// SetTyping implements channel.Typer with sendChatAction "typing". Telegram
// clears the indicator by itself after about 5 seconds or when the bot
// sends, so On=false is a no-op.
func (a *Adapter) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	if !req.On {
		return nil
	}
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "typing before configure")
	}
	p, err := a.baseParams(req.ChatID, req.ThreadID)
	if err != nil {
		return err
	}
	p["action"] = "typing"
	_, err = a.callTimeout(ctx, "sendChatAction", p, callTimeout)
	return toChannelError("typing", err)
}

// Edit implements channel.Editor with editMessageText (HTML, falling back to
// plain text). Telegram's "message is not modified" counts as success.
// The request's buttons are its reply_markup; an edit without buttons
// carries none, so Telegram removes the inline keyboard the message had,
// as the contract says.
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "edit before configure")
	}
	if req.ChatID == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "chat id is empty")
	}
	if _, err := strconv.Atoi(req.MessageID); err != nil {
		return channel.Errorf(channel.CodeInvalidRequest, "message id %q is not a Telegram message id", req.MessageID)
	}
	if strings.TrimSpace(req.Text) == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "edit to empty text")
	}
	keyboard, err := inlineKeyboard(req.Buttons)
	if err != nil {
		return err
	}
	p := tgbotapi.Params{"chat_id": req.ChatID, "message_id": req.MessageID}
	if a.cfg.DisableWebPagePreview {
		p["link_preview_options"] = `{"is_disabled":true}`
	}
	if keyboard != "" {
		p["reply_markup"] = keyboard
	}
	_, err = a.sendText(ctx, "editMessageText", p, req.Text, req.Format, req.Rendered)
	var ce *channel.Error
	if errors.As(err, &ce) && ce.Code == channel.CodeInvalidRequest && strings.Contains(ce.Message, "message is not modified") {
		return nil
	}
	return err
}

// telegramReactions are the emoji a bot may react with (Telegram's
// ReactionTypeEmoji list); another is refused before the call.
var telegramReactions = map[string]bool{}

func init() {
	for _, e := range strings.Fields("👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡") {
		telegramReactions[e] = true
	}
}

// React implements channel.Reactor with setMessageReaction: the bot's
// reaction replaces its earlier one on the message; Remove clears it.
func (a *Adapter) React(ctx context.Context, req channel.ReactRequest) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "react before configure")
	}
	if _, err := strconv.Atoi(req.MessageID); err != nil || req.ChatID == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "message id %q is not a Telegram message id", req.MessageID)
	}
	emoji := strings.TrimSuffix(req.Emoji, "\ufe0f") // ❤️ is ❤ to Telegram
	reaction := "[]"
	if !req.Remove {
		if !telegramReactions[emoji] {
			return channel.Errorf(channel.CodeInvalidRequest, "Telegram does not offer %q as a reaction; use one of 👍 ❤ 🔥 🎉 👀 🙏 👌 …", req.Emoji)
		}
		b, _ := json.Marshal([]map[string]string{{"type": "emoji", "emoji": emoji}})
		reaction = string(b)
	}
	p := tgbotapi.Params{"chat_id": req.ChatID, "message_id": req.MessageID, "reaction": reaction}
	_, err := a.callTimeout(ctx, "setMessageReaction", p, callTimeout)
	return toChannelError("react", err)
}
