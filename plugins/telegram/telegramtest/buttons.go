package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"unicode/utf8"
)

// MaxCallbackData is the longest callback_data of an inline keyboard
// button, in bytes.
const MaxCallbackData = 64

// Button is one button of an inline keyboard the bot sent.
type Button struct {
	// Text is the button's label.
	Text string
	// Data is its callback_data: what a press sends back to the bot. Empty
	// for buttons of other kinds (url, switch_inline_query, …).
	Data string
}

// Answer texts of Telegram the fake repeats (errButtonNoText is the
// fake's own wording).
const (
	errButtonData   = "BUTTON_DATA_INVALID"
	errQueryTooOld  = "query is too old and response timeout expired or query ID is invalid"
	errMarkupParse  = "can't parse reply keyboard markup JSON object"
	errTextButtons  = "can't parse InlineKeyboardButton: Text buttons are not allowed in the inline keyboard"
	errButtonNoText = "can't parse InlineKeyboardButton: button text must be non-empty"
)

// buttonActions are the fields that give an inline keyboard button its
// action; a button needs one of them.
var buttonActions = []string{"url", "callback_data", "login_url", "switch_inline_query",
	"switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "callback_game",
	"pay", "web_app", "copy_text"}

// keyboardOf reads the inline keyboard of a send or edit's reply_markup.
// No reply_markup, an inline keyboard of no buttons and other markups
// (keyboard, remove_keyboard, force_reply) yield a nil keyboard.
func keyboardOf(p url.Values) ([][]Button, *apiError) {
	raw := p.Get("reply_markup")
	if raw == "" {
		return nil, nil
	}
	var kb [][]Button
	var m struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, badRequest(errMarkupParse)
	}
	for _, row := range m.InlineKeyboard {
		var out []Button
		for _, b := range row {
			var text string
			if json.Unmarshal(b["text"], &text) != nil || text == "" {
				return nil, badRequest(errButtonNoText)
			}
			btn := Button{Text: text}
			if d, ok := b["callback_data"]; ok {
				if json.Unmarshal(d, &btn.Data) != nil || len(btn.Data) > MaxCallbackData || !utf8.ValidString(btn.Data) {
					return nil, badRequest(errButtonData)
				}
				if btn.Data == "" {
					// Telegram reads an empty callback_data as none.
					delete(b, "callback_data")
				}
			}
			action := false
			for _, k := range buttonActions {
				if _, ok := b[k]; ok {
					action = true
				}
			}
			if !action {
				return nil, badRequest(errTextButtons)
			}
			out = append(out, btn)
		}
		if len(out) > 0 {
			kb = append(kb, out)
		}
	}
	return kb, nil
}

func sameKeyboard(a, b [][]Button) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func cloneKeyboard(kb [][]Button) [][]Button {
	if kb == nil {
		return nil
	}
	out := make([][]Button, len(kb))
	for i, row := range kb {
		out[i] = append([]Button(nil), row...)
	}
	return out
}

// keyboardJSON is kb as the Bot API encodes a message's reply_markup.
func keyboardJSON(kb [][]Button) map[string]any {
	rows := make([][]map[string]any, len(kb))
	for i, row := range kb {
		for _, b := range row {
			btn := map[string]any{"text": b.Text}
			if b.Data != "" {
				btn["callback_data"] = b.Data
			}
			rows[i] = append(rows[i], btn)
		}
	}
	return map[string]any{"inline_keyboard": rows}
}

// Message returns the current content of a message the bot sent in chat
// (after any edits), and whether there is one.
func (s *Server) Message(chatID int64, messageID int) (Sent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[strconv.FormatInt(chatID, 10)+"/"+strconv.Itoa(messageID)]
	m.Keyboard = cloneKeyboard(m.Keyboard)
	return m, ok
}

// PressButton presses, as from, the button with callback_data data under
// the bot's message messageID in chat, as Telegram does when a user taps
// it: it queues a callback_query update for getUpdates whose message is
// the bot's message as it is now (its text and reply_markup) in chat —
// give the Chat the message was sent to, with its type and title — and
// returns the query's id, which answerCallbackQuery then accepts once.
//
// It fails when the bot sent no such message or when data is not the
// callback_data of one of the message's current buttons (an edit removes
// them), so a test cannot press a button the user could not.
func (s *Server) PressButton(chat Chat, messageID int, data string, from User) (callbackID string, err error) {
	s.mu.Lock()
	m, ok := s.messages[strconv.FormatInt(chat.ID, 10)+"/"+strconv.Itoa(messageID)]
	if !ok {
		s.mu.Unlock()
		return "", fmt.Errorf("telegramtest: press: the bot sent no message %d in chat %d", messageID, chat.ID)
	}
	found := false
	for _, row := range m.Keyboard {
		for _, b := range row {
			found = found || (b.Data != "" && b.Data == data)
		}
	}
	if !found {
		s.mu.Unlock()
		return "", fmt.Errorf("telegramtest: press: message %d in chat %d has no button with data %q (keyboard %v)", messageID, chat.ID, data, m.Keyboard)
	}
	s.nextCallback++
	callbackID = strconv.FormatInt(s.bot.ID, 10) + fmt.Sprintf("%012d", s.nextCallback)
	s.callbacks[callbackID] = false
	msg := s.messageJSON(m)
	s.mu.Unlock()
	msg["chat"] = chat
	s.PushUpdate(map[string]any{"callback_query": map[string]any{
		"id": callbackID, "from": from, "message": msg, "data": data,
		"chat_instance": "-" + strconv.FormatInt(chat.ID*7919+s.bot.ID, 10),
	}})
	return callbackID, nil
}

// Answered reports whether answerCallbackQuery accepted an answer to the
// query callbackID.
func (s *Server) Answered(callbackID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbacks[callbackID]
}

// answerCallbackQuery accepts one answer per query PressButton made, as
// Telegram does; anything else is "query is too old".
func (s *Server) answerCallbackQuery(p url.Values) (any, *apiError) {
	id := p.Get("callback_query_id")
	if id == "" {
		return nil, badRequest("parameter \"callback_query_id\" is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	answered, ok := s.callbacks[id]
	if !ok || answered {
		return nil, badRequest(errQueryTooOld)
	}
	s.callbacks[id] = true
	return true, nil
}
