package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

var approval = [][]channel.Button{
	{{ID: "allow", Label: "Allow"}, {ID: "deny", Label: "Deny"}},
	{{ID: "always", Label: "Always"}},
}

var approvalKeyboard = [][]telegramtest.Button{
	{{Text: "Allow", Data: "allow"}, {Text: "Deny", Data: "deny"}},
	{{Text: "Always", Data: "always"}},
}

// Buttons go under the last message a Send posts, whatever that message
// is, and under no other.
func TestSendButtonsUnderLastMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := filepath.Join(dir, "chart.png")
	doc := filepath.Join(dir, "notes.txt")
	for _, f := range []string{img, doc} {
		if err := os.WriteFile(f, []byte("bytes of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		req     channel.SendRequest
		methods []string // of the messages posted, in order; the last has the keyboard
	}{
		{name: "text", req: channel.SendRequest{Text: "run `ls`?", Format: channel.FormatMarkdown},
			methods: []string{"sendMessage"}},
		{name: "text as caption", req: channel.SendRequest{Text: "this chart?", Media: []channel.OutboundMedia{{Path: img, Kind: channel.MediaImage}}},
			methods: []string{"sendPhoto"}},
		{name: "long text, then files", req: channel.SendRequest{Text: strings.Repeat("t", 1100), Media: []channel.OutboundMedia{
			{Path: img, Kind: channel.MediaImage}, {Path: doc, Kind: channel.MediaDocument}}},
			methods: []string{"sendMessage", "sendPhoto", "sendDocument"}},
		{name: "last file's caption too long", req: channel.SendRequest{Media: []channel.OutboundMedia{
			{Path: img, Kind: channel.MediaImage}, {Path: doc, Kind: channel.MediaDocument, Caption: strings.Repeat("c", 1100)}}},
			methods: []string{"sendPhoto", "sendDocument", "sendMessage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			a := newTestAdapter(t, srv, nil)
			req := tt.req
			req.ChatID, req.Buttons = "5", approval
			resp, err := a.Send(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			s := srv.Sent()
			if len(s) != len(tt.methods) || len(resp.MessageIDs) != len(s) {
				t.Fatalf("sent %+v, ids %v", s, resp.MessageIDs)
			}
			for i, m := range s {
				if m.Method != tt.methods[i] {
					t.Fatalf("message %d is %s, want %s", i, m.Method, tt.methods[i])
				}
				last := i == len(s)-1
				if last && !reflect.DeepEqual(m.Keyboard, approvalKeyboard) {
					t.Fatalf("last message's keyboard %+v", m.Keyboard)
				}
				if !last && m.Keyboard != nil {
					t.Fatalf("message %d of %d has a keyboard %+v", i+1, len(s), m.Keyboard)
				}
			}
		})
	}
}

// The plain-text fallback after refused HTML keeps the keyboard; a
// request without buttons or with only empty rows sends no reply_markup.
func TestSendButtonsFallbackAndNone(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("sendMessage", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unexpected end tag at byte offset 3"})
	a := newTestAdapter(t, srv, nil)
	ctx := context.Background()
	sendOK(t, a, channel.SendRequest{ChatID: "5", Text: "*ok?*", Format: channel.FormatMarkdown, Buttons: approval})
	if s := srv.Sent(); len(s) != 1 || s[0].ParseMode != "" || !reflect.DeepEqual(s[0].Keyboard, approvalKeyboard) {
		t.Fatalf("fallback %+v", s)
	}
	for _, b := range [][][]channel.Button{nil, {{}, {}}} {
		if _, err := a.Send(ctx, channel.SendRequest{ChatID: "5", Text: "no buttons", Buttons: b}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests("sendMessage")
	for _, r := range reqs[len(reqs)-2:] {
		if _, ok := r.Params["reply_markup"]; ok {
			t.Fatalf("reply_markup without buttons: %v", r.Params)
		}
	}
}

// Buttons Telegram would refuse fail with a clear invalid_request before
// anything is posted; 64 bytes is the limit, in bytes, not characters.
func TestSendButtonsInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		button channel.Button
		want   string // in the error; "" = accepted
	}{
		{"64 bytes", channel.Button{ID: strings.Repeat("é", 32), Label: "ok"}, ""},
		{"65 bytes", channel.Button{ID: strings.Repeat("é", 32) + "x", Label: "Allow"}, `button 1.2 ("Allow"): its id is 65 bytes, Telegram takes at most 64`},
		{"empty id", channel.Button{Label: "Deny"}, `button 1.2 ("Deny") has an empty id`},
		{"not UTF-8", channel.Button{ID: "\xff", Label: "x"}, "not UTF-8"},
		{"blank label", channel.Button{ID: "b", Label: " "}, `button 1.2 (id "b") has an empty label`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			a := newTestAdapter(t, srv, nil)
			_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "5", Text: "q?",
				Buttons: [][]channel.Button{{{ID: "a", Label: "A"}, tt.button}}})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if channel.CodeOf(err) != channel.CodeInvalidRequest || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want invalid_request with %q", err, tt.want)
			}
			if n := len(srv.Requests("")); n != 0 {
				t.Fatalf("%d requests for a refused send", n)
			}
		})
	}
}

// An edit removes the buttons, even when the text stays the same (an
// answered question keeps none).
func TestEditRemovesButtons(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	resp := sendOK(t, a, channel.SendRequest{ChatID: "5", Text: "run ls?", Buttons: approval})
	if m, _ := srv.Message(5, 1); !reflect.DeepEqual(m.Keyboard, approvalKeyboard) {
		t.Fatalf("keyboard before the edit %+v", m.Keyboard)
	}
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: resp.MessageIDs[0], Text: "run ls?"}); err != nil {
		t.Fatal(err)
	}
	if m, ok := srv.Message(5, 1); !ok || m.Keyboard != nil || m.Visible != "run ls?" {
		t.Fatalf("after the edit %+v", m)
	}
	if r := srv.Requests("editMessageText"); len(r) != 1 || r[0].Params.Has("reply_markup") {
		t.Fatalf("edit requests %+v", r)
	}
	if _, err := srv.PressButton(telegramtest.PrivateChat(5), 1, "allow", alice); err == nil {
		t.Fatal("a removed button could still be pressed")
	}
}

func TestPressOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	bob := channel.Sender{ID: "7", Name: "Bob Jones", Username: "bob"}
	const from = `"from":{"id":7,"first_name":"Bob","last_name":"Jones","username":"bob"}`
	const markup = `"reply_markup":{"inline_keyboard":[[{"text":"Allow","callback_data":"allow"},{"text":"Docs","url":"https://example.com"}]]}`
	tests := []struct {
		name  string
		query string
		want  *channel.InboundMessage // nil: skipped
	}{
		{
			name:  "in a forum topic",
			query: `{"id":"4711",` + from + `,"chat_instance":"1","data":"allow","message":{"message_id":60,"message_thread_id":42,"is_topic_message":true,"date":1700000000,"chat":{"id":-100777,"type":"supergroup","title":"Forum","is_forum":true},"from":{"id":999,"is_bot":true,"first_name":"Claw","username":"clawbot"},"text":"run ls?",` + markup + `}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-100777", ThreadID: "42", MessageID: "cb:4711", Sender: bob, Text: "Allow",
				WasMentioned: true, Timestamp: now, ChatTitle: "Forum", Action: &channel.Action{ButtonID: "allow", MessageID: "60"}},
		},
		{
			name:  "message too old to be sent along: the data is the text",
			query: `{"id":"4712",` + from + `,"chat_instance":"1","data":"deny","message":{"message_id":61,"date":0,"chat":{"id":1001,"type":"private"}}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "cb:4712", Sender: bob, Text: "deny",
				WasMentioned: true, Timestamp: now, Action: &channel.Action{ButtonID: "deny", MessageID: "61"}},
		},
		{name: "inline mode", query: `{"id":"1",` + from + `,"chat_instance":"1","data":"allow","inline_message_id":"AAA"}`},
		{name: "game", query: `{"id":"2",` + from + `,"chat_instance":"1","game_short_name":"g","message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := decodeUpdate(json.RawMessage(`{"update_id":1,"callback_query":` + tt.query + `}`))
			if err != nil || u.CallbackQuery == nil {
				t.Fatalf("decode: %+v %v", u, err)
			}
			got, ok := pressOf(u.CallbackQuery, now)
			if tt.want == nil {
				if ok {
					t.Fatalf("want skipped, got %+v", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("got %v\n%+v\nwant\n%+v", ok, got, *tt.want)
			}
		})
	}
}

// A press through Run: delivered with its Action, answered once after the
// host stored it, the offset moving past it.
func TestPressDeliveredThenAnswered(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	a.now = func() time.Time { return now }
	forum := telegramtest.Chat{ID: -100777, Type: "supergroup", Title: "Forum", IsForum: true}
	resp := sendOK(t, a, channel.SendRequest{ChatID: "-100777", ThreadID: "42", Text: "run ls?", Buttons: approval})
	bob := telegramtest.User{ID: 7, FirstName: "Bob", Username: "bob"}
	cb, err := srv.PressButton(forum, 1, "always", bob)
	if err != nil {
		t.Fatal(err)
	}
	inbox := &sdktest.Inbox{}
	inbox.Decide = func(context.Context, int, []channel.InboundMessage) error {
		if n := len(srv.Requests("answerCallbackQuery")); n != 0 {
			t.Errorf("press answered before the host stored it")
		}
		return nil
	}
	got, answers := runUntilAnswered(t, srv, a.Adapter, inbox)

	want := channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-100777", ThreadID: "42", MessageID: "cb:" + cb,
		Sender: channel.Sender{ID: "7", Name: "Bob", Username: "bob"}, Text: "Always", WasMentioned: true, Timestamp: now,
		ChatTitle: "Forum", Action: &channel.Action{ButtonID: "always", MessageID: resp.MessageIDs[0]}}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("stored %+v\nwant %+v", got, want)
	}
	if len(answers) != 1 || answers[0].Params.Get("callback_query_id") != cb || answers[0].Params.Has("text") || !srv.Answered(cb) {
		t.Fatalf("answers %+v", answers)
	}
	for _, r := range srv.Requests("getUpdates") {
		if !strings.Contains(r.Params.Get("allowed_updates"), `"callback_query"`) {
			t.Fatalf("getUpdates does not ask for callback queries: %v", r.Params)
		}
	}
}

// runUntilAnswered runs a with inbox until it has stored one message (a
// button press) and answered one callback query, and Telegram has no
// update pending; it returns what was stored and the answers.
func runUntilAnswered(t *testing.T, srv *telegramtest.Server, a *Adapter, inbox *sdktest.Inbox) ([]channel.InboundMessage, []telegramtest.Request) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	got := inbox.Wait(t, 1)
	waitCtx, waitCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer waitCancel()
	answers, err := srv.WaitRequests(waitCtx, "answerCallbackQuery", 1)
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "no update pending", func() bool { return srv.Pending() == 0 })
	_ = stop()
	return got, answers
}

// A press the host does not store is neither confirmed nor answered: it
// comes again with the next getUpdates and is answered once stored. A
// failed answer is only logged, without the token.
func TestPressNotAnsweredUntilStored(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a, logs := newLoggedAdapter(t, srv, nil)
	a.sleep = (&sleepRecorder{}).sleep
	sendOK(t, a, channel.SendRequest{ChatID: "1001", Text: "run ls?", Buttons: approval})
	cb, err := srv.PressButton(telegramtest.PrivateChat(1001), 1, "deny", alice)
	if err != nil {
		t.Fatal(err)
	}
	confirmed := srv.Offset()
	srv.Fail("answerCallbackQuery", 1, telegramtest.ServerError(502))
	inbox := &sdktest.Inbox{}
	inbox.Decide = func(_ context.Context, call int, _ []channel.InboundMessage) error {
		if n := len(srv.Requests("answerCallbackQuery")); n != 0 {
			t.Errorf("call %d: press answered before the host stored it", call)
		}
		if srv.Offset() > confirmed || srv.Pending() != 1 {
			t.Errorf("call %d: offset %d confirmed the press before the host stored it", call, srv.Offset())
		}
		if call <= 2 {
			return errors.New("journal full")
		}
		return nil
	}
	got, _ := runUntilAnswered(t, srv, a, inbox)
	if inbox.Calls() != 3 || got[0].Action == nil || got[0].Action.ButtonID != "deny" || got[0].MessageID != "cb:"+cb {
		t.Fatalf("stored %+v after %d calls", got, inbox.Calls())
	}
	if n := len(srv.Requests("answerCallbackQuery")); n != 1 || srv.Answered(cb) {
		t.Fatalf("%d answers (answered %v), want 1 failed and not retried", n, srv.Answered(cb))
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN msg=\"could not answer a button press") || strings.Contains(out, testToken) {
		t.Fatalf("log:\n%s", out)
	}
}

// Callback queries that are not presses under the bot's messages are
// skipped with a debug line, and the offset moves past them.
func TestCallbackQueryWithoutMessageSkipped(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.PushUpdate(map[string]any{"callback_query": map[string]any{"id": "1", "from": alice, "chat_instance": "1", "inline_message_id": "AAA", "data": "allow"}})
	srv.PushUpdate(map[string]any{"callback_query": map[string]any{"id": "2", "from": alice, "chat_instance": "1", "game_short_name": "g",
		"message": map[string]any{"message_id": 1, "date": 1, "chat": telegramtest.PrivateChat(1001)}}})
	last := srv.PushText(telegramtest.PrivateChat(1001), alice, "after")
	a, logs := newLoggedAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	got := inbox.Wait(t, 1)
	sdktest.WaitFor(t, "the offset past the last update", func() bool { return srv.Offset() == last+1 })
	_ = stop()
	if len(got) != 1 || got[0].Text != "after" || got[0].Action != nil {
		t.Fatalf("stored %+v", got)
	}
	if n := len(srv.Requests("answerCallbackQuery")); n != 0 {
		t.Fatalf("%d answers to skipped queries", n)
	}
	out := logs.String()
	for _, want := range []string{"level=DEBUG msg=\"ignoring a callback query", "has_message=false", "has_data=false"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// By webhook a press is delivered and answered like by polling. The
// update is the fake's own, relayed from its getUpdates.
func TestPressByWebhook(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"webhook_listen": "127.0.0.1:0", "webhook_secret": "s3cret-s3cret-s3cret"})
	sendOK(t, a, channel.SendRequest{ChatID: "1001", Text: "run ls?", Buttons: approval})
	cb, err := srv.PressButton(telegramtest.PrivateChat(1001), 1, "allow", alice)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	get := func(url string) []byte {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	var updates struct{ Result []json.RawMessage }
	if err := json.Unmarshal(get(srv.URL()+"/bot"+testToken+"/getUpdates"), &updates); err != nil || len(updates.Result) != 1 {
		t.Fatalf("updates %+v %v", updates, err)
	}

	inbox := &sdktest.Inbox{}
	runCtx, runCancel := context.WithCancel(context.Background())
	stop := runAdapter(t, runCtx, runCancel, a, inbox)
	addr, err := a.webhookListenAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/hook", strings.NewReader(string(updates.Result[0])))
	req.Header.Set(secretHeader, "s3cret-s3cret-s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook answered %d", resp.StatusCode)
	}
	_ = stop()
	got := inbox.Stored()
	if len(got) != 1 || got[0].Text != "Allow" || got[0].Action == nil || got[0].Action.ButtonID != "allow" || !srv.Answered(cb) {
		t.Fatalf("stored %+v, answered %v", got, srv.Answered(cb))
	}
}

// An edit with buttons keeps (or sets) the inline keyboard — a turn
// card's Stop button across its updates — and the next edit without
// buttons removes it.
func TestEditKeepsButtons(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	resp := sendOK(t, a, channel.SendRequest{ChatID: "5", Text: "⏳ Working · 0s", Buttons: approval})
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: resp.MessageIDs[0], Text: "⏳ Working · 5s", Buttons: approval}); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(5, 1); !reflect.DeepEqual(m.Keyboard, approvalKeyboard) || m.Visible != "⏳ Working · 5s" {
		t.Fatalf("after an edit with buttons %+v", m)
	}
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: resp.MessageIDs[0], Text: "The answer."}); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(5, 1); m.Keyboard != nil || m.Visible != "The answer." {
		t.Fatalf("after the final edit %+v", m)
	}
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: resp.MessageIDs[0], Text: "x", Buttons: [][]channel.Button{{{ID: "", Label: "bad"}}}}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("an edit with a bad button: %v", err)
	}
}
