package telegramtest

import (
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDeleteMessage: a deleted message is recorded with nothing visible,
// and can be neither deleted again nor edited.
func TestDeleteMessage(t *testing.T) {
	t.Parallel()
	srv := NewServer("1:x")
	defer srv.Close()
	if code, v := call(t, srv, "sendMessage", url.Values{"chat_id": {"5"}, "text": {"preview"}}); code != 200 {
		t.Fatalf("sendMessage: %d %v", code, v)
	}
	id := strconv.Itoa(srv.Sent()[0].MessageID)
	if code, v := call(t, srv, "deleteMessage", url.Values{"chat_id": {"5"}, "message_id": {id}}); code != 200 || v["result"] != true {
		t.Fatalf("deleteMessage: %d %v", code, v)
	}
	sent := srv.Sent()
	if len(sent) != 2 || sent[1].Method != "deleteMessage" || sent[1].Visible != "" || sent[1].MessageID != sent[0].MessageID || sent[1].ChatID != "5" {
		t.Fatalf("sent after the delete: %+v", sent)
	}
	for _, c := range []struct{ method, want string }{
		{"deleteMessage", "Bad Request: message to delete not found"},
		{"editMessageText", ""}, // any 400: the message is gone
	} {
		code, v := call(t, srv, c.method, url.Values{"chat_id": {"5"}, "message_id": {id}, "text": {"again"}})
		if code != 400 || c.want != "" && v["description"] != c.want {
			t.Errorf("%s of the deleted message: %d %v", c.method, code, v)
		}
	}
	if code, _ := call(t, srv, "deleteMessage", url.Values{"chat_id": {"5"}, "message_id": {"999"}}); code != 400 {
		t.Errorf("deleteMessage of an unknown message: %d, want 400", code)
	}
}

// TestEmptyMultipartBody: a call without parameters sent as a multipart
// body with no parts (as go-telegram/bot sends getMe) is answered, as the
// Bot API answers it.
func TestEmptyMultipartBody(t *testing.T) {
	t.Parallel()
	srv := NewServer("1:x")
	defer srv.Close()
	var body strings.Builder
	w := multipart.NewWriter(&body)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/bot1:x/getMe", strings.NewReader(body.String()))
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("getMe with an empty multipart body: %d", resp.StatusCode)
	}
}

// TestJSONBody: a call's parameters as a JSON object, as the Bot API takes
// them (telego sends every call so): numbers and objects are read as a
// form carries them.
func TestJSONBody(t *testing.T) {
	t.Parallel()
	srv := NewServer("1:x")
	defer srv.Close()
	body := `{"chat_id":5,"text":"hi <b>there</b>","parse_mode":"HTML","reply_markup":{"inline_keyboard":[[{"text":"Yes","callback_data":"y"}]]},"reply_parameters":null}`
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/bot1:x/sendMessage", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sent := srv.Sent()
	if resp.StatusCode != 200 || len(sent) != 1 || sent[0].ChatID != "5" || sent[0].Visible != "hi there" ||
		len(sent[0].Keyboard) != 1 || sent[0].Keyboard[0][0] != (Button{"Yes", "y"}) {
		t.Fatalf("sendMessage with a JSON body: %d, sent %+v", resp.StatusCode, sent)
	}
}
