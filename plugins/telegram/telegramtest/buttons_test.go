package telegramtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// call posts method with form to srv and returns the HTTP status and the
// decoded answer.
func call(t *testing.T, srv *Server, method string, form url.Values) (int, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/bot"+srv.Token()+"/"+method, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s answer %q: %v", method, b, err)
	}
	return resp.StatusCode, v
}

// TestKeyboardValidation: reply_markup is checked as Telegram checks it.
func TestKeyboardValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		markup string
		want   [][]Button
		err    string // description of the 400; "" = accepted
	}{
		{name: "rows", markup: `{"inline_keyboard":[[{"text":"Allow","callback_data":"a"},{"text":"Deny","callback_data":"d"}],[{"text":"Always","callback_data":"` + strings.Repeat("x", 64) + `"}]]}`,
			want: [][]Button{{{"Allow", "a"}, {"Deny", "d"}}, {{"Always", strings.Repeat("x", 64)}}}},
		{name: "url button", markup: `{"inline_keyboard":[[{"text":"Docs","url":"https://example.com"}]]}`, want: [][]Button{{{Text: "Docs"}}}},
		{name: "no rows", markup: `{"inline_keyboard":[]}`},
		{name: "data over 64 bytes", markup: `{"inline_keyboard":[[{"text":"A","callback_data":"` + strings.Repeat("x", 65) + `"}]]}`, err: "Bad Request: BUTTON_DATA_INVALID"},
		{name: "text button", markup: `{"inline_keyboard":[[{"text":"A"}]]}`, err: "Bad Request: " + errTextButtons},
		{name: "empty data", markup: `{"inline_keyboard":[[{"text":"A","callback_data":""}]]}`, err: "Bad Request: " + errTextButtons},
		{name: "empty text", markup: `{"inline_keyboard":[[{"text":"","callback_data":"a"}]]}`, err: "Bad Request: " + errButtonNoText},
		{name: "not JSON", markup: `{"inline_keyboard":`, err: "Bad Request: " + errMarkupParse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer("1:T")
			defer srv.Close()
			status, v := call(t, srv, "sendMessage", url.Values{"chat_id": {"5"}, "text": {"q?"}, "reply_markup": {tt.markup}})
			if tt.err != "" {
				if status != 400 || v["description"] != tt.err || len(srv.Sent()) != 0 {
					t.Fatalf("status %d %v sent %+v, want 400 %q", status, v, srv.Sent(), tt.err)
				}
				return
			}
			if status != 200 {
				t.Fatalf("status %d %v", status, v)
			}
			s := srv.Sent()
			if len(s) != 1 || !reflect.DeepEqual(s[0].Keyboard, tt.want) {
				t.Fatalf("keyboard %+v, want %+v", s[0].Keyboard, tt.want)
			}
			_, hasMarkup := v["result"].(map[string]any)["reply_markup"]
			if hasMarkup != (len(tt.want) > 0) {
				t.Fatalf("result %v", v["result"])
			}
		})
	}
}

// TestPressAndAnswer: a press of a real button queues a callback_query
// carrying the message and its keyboard; it is answered once; an edit
// without reply_markup removes the keyboard, after which nothing can be
// pressed.
func TestPressAndAnswer(t *testing.T) {
	t.Parallel()
	srv := NewServer("1:T")
	defer srv.Close()
	chat := Supergroup(-100, "devs")
	bob := User{ID: 7, FirstName: "Bob"}
	markup := `{"inline_keyboard":[[{"text":"Allow","callback_data":"allow"},{"text":"Deny","callback_data":"deny"}]]}`
	if status, v := call(t, srv, "sendMessage", url.Values{"chat_id": {"-100"}, "text": {"run ls?"}, "reply_markup": {markup}}); status != 200 {
		t.Fatalf("send: %d %v", status, v)
	}
	id := srv.Sent()[0].MessageID
	if _, err := srv.PressButton(chat, id, "always", bob); err == nil {
		t.Fatal("pressed a button the message does not have")
	}
	if _, err := srv.PressButton(chat, id+1, "allow", bob); err == nil {
		t.Fatal("pressed a button of a message never sent")
	}
	cb, err := srv.PressButton(chat, id, "deny", bob)
	if err != nil {
		t.Fatal(err)
	}
	_, v := call(t, srv, "getUpdates", url.Values{})
	ups := v["result"].([]any)
	if len(ups) != 1 {
		t.Fatalf("updates %v", ups)
	}
	q := ups[0].(map[string]any)["callback_query"].(map[string]any)
	msg := q["message"].(map[string]any)
	if q["id"] != cb || q["data"] != "deny" || q["from"].(map[string]any)["first_name"] != "Bob" ||
		msg["text"] != "run ls?" || msg["chat"].(map[string]any)["title"] != "devs" {
		t.Fatalf("callback_query %v", q)
	}
	rows := msg["reply_markup"].(map[string]any)["inline_keyboard"].([]any)
	if b := rows[0].([]any)[1].(map[string]any); b["text"] != "Deny" || b["callback_data"] != "deny" {
		t.Fatalf("reply_markup %v", rows)
	}

	if status, v := call(t, srv, "answerCallbackQuery", url.Values{"callback_query_id": {cb}}); status != 200 || v["result"] != true || !srv.Answered(cb) {
		t.Fatalf("answer: %d %v", status, v)
	}
	for _, id := range []string{cb, "12345"} {
		status, v := call(t, srv, "answerCallbackQuery", url.Values{"callback_query_id": {id}})
		if status != 400 || v["description"] != "Bad Request: "+errQueryTooOld {
			t.Fatalf("answer %s again or unknown: %d %v", id, status, v)
		}
	}

	// Edits: with reply_markup the keyboard is replaced, without it removed.
	form := url.Values{"chat_id": {"-100"}, "message_id": {strconv.Itoa(id)}, "text": {"run ls?"},
		"reply_markup": {`{"inline_keyboard":[[{"text":"Undo","callback_data":"undo"}]]}`}}
	if status, v := call(t, srv, "editMessageText", form); status != 200 {
		t.Fatalf("edit: %d %v", status, v)
	}
	if m, _ := srv.Message(-100, id); !reflect.DeepEqual(m.Keyboard, [][]Button{{{"Undo", "undo"}}}) {
		t.Fatalf("replaced keyboard %+v", m.Keyboard)
	}
	// The same text without reply_markup is a change: the keyboard goes.
	form.Del("reply_markup")
	if status, v := call(t, srv, "editMessageText", form); status != 200 {
		t.Fatalf("edit removing the keyboard: %d %v", status, v)
	}
	if m, ok := srv.Message(-100, id); !ok || m.Keyboard != nil {
		t.Fatalf("keyboard after edit %+v", m)
	}
	if status, _ := call(t, srv, "editMessageText", form); status != 400 {
		t.Fatal("an edit changing nothing was accepted")
	}
	if _, err := srv.PressButton(chat, id, "undo", bob); err == nil {
		t.Fatal("pressed a button an edit removed")
	}
}
