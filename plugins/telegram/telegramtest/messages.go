package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Sent is a message the bot sent (or edited) successfully.
type Sent struct {
	// Method is the API method: sendMessage, editMessageText, sendPhoto,
	// sendDocument, sendVoice, or deleteMessage (nothing visible: the
	// message of MessageID was deleted).
	Method    string
	ChatID    string
	MessageID int
	ThreadID  int
	// ReplyTo is the replied-to message id (reply_parameters or reply_to_message_id).
	ReplyTo int
	// Text is the text or caption as sent (HTML source when ParseMode is HTML).
	Text      string
	ParseMode string
	// Visible is what the user sees: Text with tags removed and entities decoded.
	Visible            string
	DisableLinkPreview bool
	Silent             bool
	File               *UploadedFile
	// Keyboard is the inline keyboard under the message (reply_markup),
	// row by row; nil when it has none. An edit without reply_markup
	// removes it, as on Telegram.
	Keyboard [][]Button
}

// Sent returns the messages sent and edited so far, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sentCopy()
}

func (s *Server) sentCopy() []Sent {
	out := append([]Sent(nil), s.sent...)
	for i := range out {
		out[i].Keyboard = cloneKeyboard(out[i].Keyboard)
	}
	return out
}

// WaitSent waits until at least n messages were sent (see Sent) or ctx ends.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Sent, error) {
	for {
		s.mu.Lock()
		if len(s.sent) >= n {
			out := s.sentCopy()
			s.mu.Unlock()
			return out, nil
		}
		wait := s.sentNotify
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return s.Sent(), fmt.Errorf("wait for %d sent messages: %w", n, ctx.Err())
		case <-wait:
		}
	}
}

func (s *Server) recordSent(m Sent) {
	s.sent = append(s.sent, m)
	s.messages[m.ChatID+"/"+strconv.Itoa(m.MessageID)] = m
	close(s.sentNotify)
	s.sentNotify = make(chan struct{})
}

// checkMessage reads the chat and the message_id of a call on one message.
func checkMessage(p url.Values) (string, int, *apiError) {
	chat, aerr := checkChat(p)
	if aerr != nil {
		return "", 0, aerr
	}
	id, err := strconv.Atoi(p.Get("message_id"))
	if err != nil {
		return "", 0, badRequest("message identifier is not specified")
	}
	return chat, id, nil
}

func checkChat(p url.Values) (string, *apiError) {
	chat := p.Get("chat_id")
	if chat == "" {
		return "", badRequest("chat_id is empty")
	}
	if _, err := strconv.ParseInt(chat, 10, 64); err != nil && !strings.HasPrefix(chat, "@") {
		return "", badRequest("chat not found")
	}
	return chat, nil
}

// visible parses text with parse_mode and returns what the user would see.
func visible(text, parseMode string) (string, *apiError) {
	switch strings.ToLower(parseMode) {
	case "":
		return text, nil
	case "html":
		v, err := ParseHTML(text)
		if err != nil {
			return "", badRequest("can't parse entities: %v", err)
		}
		return v, nil
	case "markdown", "markdownv2":
		return text, nil // not validated by the fake
	default:
		return "", badRequest("unsupported parse_mode")
	}
}

// placementOf reads where a new message goes and what hangs under it:
// the message it replies to (reply_parameters or reply_to_message_id),
// its inline keyboard (reply_markup) and its forum topic
// (message_thread_id).
func placementOf(p url.Values) (reply int, kb [][]Button, thread int, aerr *apiError) {
	if reply, aerr = replyTo(p); aerr != nil {
		return 0, nil, 0, aerr
	}
	if kb, aerr = keyboardOf(p); aerr != nil {
		return 0, nil, 0, aerr
	}
	thread, _ = strconv.Atoi(p.Get("message_thread_id"))
	return reply, kb, thread, nil
}

func replyTo(p url.Values) (int, *apiError) {
	if rp := p.Get("reply_parameters"); rp != "" {
		var v struct {
			MessageID int `json:"message_id"`
		}
		if err := json.Unmarshal([]byte(rp), &v); err != nil || v.MessageID == 0 {
			return 0, badRequest("can't parse reply parameters JSON object")
		}
		return v.MessageID, nil
	}
	if id := p.Get("reply_to_message_id"); id != "" {
		n, err := strconv.Atoi(id)
		if err != nil {
			return 0, badRequest("invalid reply_to_message_id")
		}
		return n, nil
	}
	return 0, nil
}

func linkPreviewDisabled(p url.Values) bool {
	if p.Get("disable_web_page_preview") == "true" {
		return true
	}
	if lp := p.Get("link_preview_options"); lp != "" {
		var v struct {
			IsDisabled bool `json:"is_disabled"`
		}
		_ = json.Unmarshal([]byte(lp), &v)
		return v.IsDisabled
	}
	return false
}

func (s *Server) messageJSON(m Sent) map[string]any {
	chatID, _ := strconv.ParseInt(m.ChatID, 10, 64)
	chatType := "supergroup"
	if chatID > 0 {
		chatType = "private"
	}
	out := map[string]any{
		"message_id": m.MessageID,
		"date":       time.Now().Unix(),
		"chat":       map[string]any{"id": chatID, "type": chatType},
		"from":       s.bot,
	}
	if m.File == nil {
		out["text"] = m.Visible
	} else if m.Visible != "" {
		out["caption"] = m.Visible
	}
	if m.ThreadID != 0 {
		out["message_thread_id"] = m.ThreadID
		out["is_topic_message"] = true
	}
	if len(m.Keyboard) > 0 {
		out["reply_markup"] = keyboardJSON(m.Keyboard)
	}
	return out
}

func (s *Server) sendMessage(p url.Values) (any, *apiError) {
	chat, aerr := checkChat(p)
	if aerr != nil {
		return nil, aerr
	}
	text := p.Get("text")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	vis, aerr := visible(text, p.Get("parse_mode"))
	if aerr != nil {
		return nil, aerr
	}
	if strings.TrimSpace(vis) == "" {
		return nil, badRequest("message text is empty")
	}
	if UTF16Len(vis) > MaxTextLength {
		return nil, badRequest("message is too long")
	}
	return s.post(p, Sent{Method: "sendMessage", ChatID: chat, Text: text, Visible: vis, DisableLinkPreview: linkPreviewDisabled(p)})
}

// post records m, a message the bot sends, with what every send method
// takes from p (reply, keyboard, thread, parse_mode,
// disable_notification), under the next message id, and answers it as
// Telegram does.
func (s *Server) post(p url.Values, m Sent) (any, *apiError) {
	reply, kb, thread, aerr := placementOf(p)
	if aerr != nil {
		return nil, aerr
	}
	m.ReplyTo, m.Keyboard, m.ThreadID = reply, kb, thread
	m.ParseMode = p.Get("parse_mode")
	m.Silent = p.Get("disable_notification") == "true"
	s.mu.Lock()
	defer s.mu.Unlock()
	m.MessageID = s.nextMsgID
	s.nextMsgID++
	s.recordSent(m)
	return s.messageJSON(m), nil
}

func (s *Server) editMessageText(p url.Values) (any, *apiError) {
	chat, id, aerr := checkMessage(p)
	if aerr != nil {
		return nil, aerr
	}
	text := p.Get("text")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("text must be non-empty")
	}
	vis, aerr := visible(text, p.Get("parse_mode"))
	if aerr != nil {
		return nil, aerr
	}
	if UTF16Len(vis) > MaxTextLength {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	// Without reply_markup the edited message keeps no inline keyboard.
	kb, aerr := keyboardOf(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.messages[chat+"/"+strconv.Itoa(id)]
	if !ok {
		return nil, badRequest("message to edit not found")
	}
	if old.Visible == vis && strings.EqualFold(old.ParseMode, p.Get("parse_mode")) && old.Text == text && sameKeyboard(old.Keyboard, kb) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m := old
	m.Method, m.Text, m.ParseMode, m.Visible, m.Keyboard = "editMessageText", text, p.Get("parse_mode"), vis, kb
	s.recordSent(m)
	return s.messageJSON(m), nil
}

// deleteMessage deletes a message the bot sent. It is recorded in Sent
// as a "deleteMessage" entry with the message's id and nothing visible,
// so that what a chat shows after it (a tally of Sent by id) no longer
// has the message.
func (s *Server) deleteMessage(p url.Values) (any, *apiError) {
	chat, id, aerr := checkMessage(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := chat + "/" + strconv.Itoa(id)
	old, ok := s.messages[key]
	if !ok {
		return nil, badRequest("message to delete not found")
	}
	s.recordSent(Sent{Method: "deleteMessage", ChatID: old.ChatID, MessageID: old.MessageID, ThreadID: old.ThreadID})
	delete(s.messages, key)
	return true, nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(p url.Values) (any, *apiError) {
	if _, aerr := checkChat(p); aerr != nil {
		return nil, aerr
	}
	if !chatActions[p.Get("action")] {
		return nil, badRequest("wrong parameter action in request")
	}
	return true, nil
}

// setMessageReaction sets (or, with an empty list, clears) the bot's
// reaction on a message it knows: one emoji reaction at most, as for a
// bot without premium.
func (s *Server) setMessageReaction(p url.Values) (any, *apiError) {
	chat, aerr := checkChat(p)
	if aerr != nil {
		return nil, aerr
	}
	id := p.Get("message_id")
	var list []struct {
		Type  string `json:"type"`
		Emoji string `json:"emoji"`
	}
	if r := p.Get("reaction"); r != "" {
		if err := json.Unmarshal([]byte(r), &list); err != nil {
			return nil, badRequest("can't parse reaction JSON object")
		}
	}
	if len(list) > 1 || (len(list) == 1 && (list[0].Type != "emoji" || list[0].Emoji == "")) {
		return nil, badRequest("REACTIONS_TOO_MANY")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reactions == nil {
		s.reactions = map[string]string{}
	}
	key := fmt.Sprint(chat) + "/" + id
	if len(list) == 0 {
		delete(s.reactions, key)
	} else {
		s.reactions[key] = list[0].Emoji
	}
	return true, nil
}

// Reaction is the bot's reaction on message id of chat ("" none).
func (s *Server) Reaction(chat int64, id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reactions[fmt.Sprint(chat)+"/"+strconv.Itoa(id)]
}
