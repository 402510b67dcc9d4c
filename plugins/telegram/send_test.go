package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
)

func TestSendMarkdownAsHTML(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"disable_web_page_preview": true})
	resp, err := a.Send(context.Background(), channel.SendRequest{
		ChatID: "-100777", ThreadID: "42", ReplyToMessageID: "51", Text: "**done**: see `x < y`", Format: channel.FormatMarkdown, Silent: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Sent()
	if len(sent) != 1 || len(resp.MessageIDs) != 1 || resp.MessageIDs[0] != "1" {
		t.Fatalf("sent %+v resp %+v", sent, resp)
	}
	s := sent[0]
	if s.ParseMode != "HTML" || s.Text != "<b>done</b>: see <code>x &lt; y</code>" || s.Visible != "done: see x < y" {
		t.Fatalf("sent %+v", s)
	}
	if s.ThreadID != 42 || s.ReplyTo != 51 || !s.DisableLinkPreview || !s.Silent {
		t.Fatalf("routing/options lost: %+v", s)
	}
}

// The host's rendering of the text (SendRequest.Rendered) is what is sent
// when it is Telegram's HTML subset, its visible text the plain fallback;
// markdown without one, or with one for another markup, goes as plain
// text as it is (the plugin links no markdown parser).
func TestSendTakesTheHostsRendering(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("sendMessage", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"})
	a := newTestAdapter(t, srv, nil).Adapter // the plugin alone
	// Unlike the text's own rendering, so that the test tells which was sent.
	pre := &channel.Rendered{Markup: channel.MarkupHTMLSubset, Text: "<i>from the host</i>", Visible: "from the host"}
	sendOK(t, a, channel.SendRequest{ChatID: "1", Text: "**done**", Format: channel.FormatMarkdown, Rendered: pre})
	reqs := srv.Requests("sendMessage")
	if len(reqs) != 2 || reqs[0].Params.Get("text") != pre.Text || reqs[0].Params.Get("parse_mode") != "HTML" ||
		reqs[1].Params.Get("text") != pre.Visible || reqs[1].Params.Get("parse_mode") != "" {
		t.Fatalf("requests %+v", reqs)
	}
	other := &channel.Rendered{Markup: channel.MarkupMarkdown, Text: "**done** (markdown)", Visible: "**done** (markdown)"}
	for _, r := range []*channel.Rendered{other, nil} {
		if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "**done**", Format: channel.FormatMarkdown, Rendered: r}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Edit(context.Background(), channel.EditRequest{ChatID: "1", MessageID: "1", Text: "**edited**", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	s := srv.Sent()
	if len(s) != 4 {
		t.Fatalf("sent %+v", s)
	}
	for _, m := range s[1:] {
		if m.ParseMode != "" || !strings.HasPrefix(m.Text, "**") {
			t.Errorf("markdown without a rendering for html-subset: sent %+v, want the text as plain text", m)
		}
	}
}

func TestSendFallsBackToPlainWhenHTMLRefused(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("sendMessage", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"})
	a := newTestAdapter(t, srv, nil)
	sendOK(t, a, channel.SendRequest{ChatID: "1", Text: "*hi*", Format: channel.FormatMarkdown})
	reqs := srv.Requests("sendMessage")
	if len(reqs) != 2 || reqs[0].Params.Get("parse_mode") != "HTML" || reqs[1].Params.Get("parse_mode") != "" || reqs[1].Params.Get("text") != "hi" {
		t.Fatalf("requests %+v", reqs)
	}
}

// The limit counts the visible text of markdown (the host splits by it):
// markup that makes the source longer costs nothing, and a visible text
// over the limit is refused before any request, as plain text is.
func TestSendLimitCountsVisibleText(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"text_limit": 20})
	// 29 units of markdown, 20 visible.
	sendOK(t, a, channel.SendRequest{ChatID: "1", Text: "**" + strings.Repeat("a", 10) + "** [" + strings.Repeat("b", 9) + "](https://x.io)", Format: channel.FormatMarkdown})
	if s := srv.Sent(); len(s) != 1 || s[0].ParseMode != "HTML" {
		t.Fatalf("sent %+v", s)
	}
	// The lazy continuation line is indented in the rendering: 20 units
	// of markdown, 22 visible.
	_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "- a\n- b\n- c\n- d\n-e" + "xx", Format: channel.FormatMarkdown})
	if channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("22 visible units with limit 20: %v", err)
	}
	_, err = a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: strings.Repeat("😀", 11)})
	if channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("22 UTF-16 units with limit 20: %v", err)
	}
	if len(srv.Requests("sendMessage")) != 1 {
		t.Fatal("a too long text reached the API")
	}
}

func TestSendLimitIsUTF16(t *testing.T) {
	t.Parallel()
	_, a := newFake(t)
	ok := strings.Repeat("😀", 2048) // 4096 units
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: ok, Format: channel.FormatMarkdown}); err != nil {
		t.Fatalf("4096 units: %v", err)
	}
	_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: ok + "x"})
	if channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("4097 units: %v", err)
	}
}

func TestSendErrorMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fail  telegramtest.Failure
		code  channel.Code
		retry time.Duration
	}{
		{"429", telegramtest.TooManyRequests(12), channel.CodeRateLimited, 12 * time.Second},
		{"too long", telegramtest.Failure{Code: 400, Description: "Bad Request: message is too long"}, channel.CodeMessageTooLong, 0},
		{"chat not found", telegramtest.Failure{Code: 400, Description: "Bad Request: chat not found"}, channel.CodeChatNotFound, 0},
		{"thread not found", telegramtest.Failure{Code: 400, Description: "Bad Request: message thread not found"}, channel.CodeChatNotFound, 0},
		{"other 400", telegramtest.Failure{Code: 400, Description: "Bad Request: wrong something"}, channel.CodeInvalidRequest, 0},
		{"blocked", telegramtest.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"}, channel.CodeForbidden, 0},
		{"401", telegramtest.Unauthorized(), channel.CodeUnauthorized, 0},
		{"502", telegramtest.Failure{Code: 502, Description: "Bad Gateway"}, channel.CodeUnavailable, 0},
		{"500", telegramtest.Failure{Code: 500, Description: "Internal Server Error"}, channel.CodeUnavailable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Fail("sendMessage", 1, tt.fail)
			a := newTestAdapter(t, srv, nil)
			_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "hi"})
			var ce *channel.Error
			if !errors.As(err, &ce) || ce.Code != tt.code || ce.RetryAfter != tt.retry {
				t.Fatalf("got %#v, want code %s retry %v", err, tt.code, tt.retry)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Fatalf("token in %q", err)
			}
		})
	}
}

func TestSendRealChatNotFound(t *testing.T) {
	t.Parallel()
	_, a := newFake(t)
	_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "nobody", Text: "hi"})
	if channel.CodeOf(err) != channel.CodeChatNotFound {
		t.Fatal(err)
	}
	_, err = a.Send(context.Background(), channel.SendRequest{ChatID: "1", ThreadID: "general", Text: "hi"})
	if channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatal(err)
	}
	_, err = a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: " \n"})
	if channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatal(err)
	}
}

func TestSendMedia(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "chart.png")
	doc := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(img, []byte("\x89PNG fake"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err := a.Send(context.Background(), channel.SendRequest{
		ChatID: "1", ThreadID: "7", ReplyToMessageID: "3", Text: "here", Format: channel.FormatPlain,
		Media: []channel.OutboundMedia{
			{Path: img, Kind: channel.MediaImage, Caption: "the chart"},
			{Path: doc, Kind: channel.MediaDocument, Caption: strings.Repeat("c", 1100)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := srv.Sent()
	if len(resp.MessageIDs) != 4 || len(s) != 4 {
		t.Fatalf("resp %v sent %+v", resp, s)
	}
	if s[0].Method != "sendMessage" || s[0].ReplyTo != 3 || s[1].ReplyTo != 0 {
		t.Fatalf("only the first message replies: %+v", s)
	}
	if s[1].Method != "sendPhoto" || s[1].File.Filename != "chart.png" || string(s[1].File.Data) != "\x89PNG fake" || s[1].Visible != "the chart" || s[1].ThreadID != 7 {
		t.Fatalf("photo %+v", s[1])
	}
	if s[2].Method != "sendDocument" || s[2].Visible != "" || s[3].Method != "sendMessage" || len(s[3].Visible) != 1100 || s[3].ThreadID != 7 {
		t.Fatalf("document with long caption %+v / %+v", s[2], s[3])
	}
	_, err = a.Send(context.Background(), channel.SendRequest{ChatID: "1", Media: []channel.OutboundMedia{{Path: filepath.Join(dir, "missing")}}})
	if channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatal(err)
	}
}

func TestEdit(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	resp := sendOK(t, a, channel.SendRequest{ChatID: "5", Text: "draft"})
	id := resp.MessageIDs[0]
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: id, Text: "**final**", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	// Same content again: Telegram says "not modified", which is success.
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: id, Text: "**final**", Format: channel.FormatMarkdown}); err != nil {
		t.Fatalf("not modified: %v", err)
	}
	s := srv.Sent()
	if len(s) != 2 || s[1].Method != "editMessageText" || s[1].Text != "<b>final</b>" || s[1].ParseMode != "HTML" {
		t.Fatalf("sent %+v", s)
	}
	srv.Fail("editMessageText", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unexpected end tag at byte offset 3"})
	if err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: id, Text: "*plain now*", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if s := srv.Sent(); s[2].ParseMode != "" || s[2].Text != "plain now" {
		t.Fatalf("fallback %+v", s[2])
	}
	err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: "4242", Text: "x"})
	if channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatal(err)
	}
}

func TestSetTyping(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	if err := a.SetTyping(ctx, channel.TypingRequest{ChatID: "5", ThreadID: "9", On: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetTyping(ctx, channel.TypingRequest{ChatID: "5", On: false}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests("sendChatAction")
	if len(r) != 1 || r[0].Params.Get("action") != "typing" || r[0].Params.Get("message_thread_id") != "9" {
		t.Fatalf("requests %+v", r)
	}
}

func TestDownloadMedia(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddFile("f1", "photos/file_1.jpg", []byte("jpeg bytes"))
	srv.AddFile("big", "documents/big.bin", make([]byte, 2000))
	a := newTestAdapter(t, srv, map[string]any{"max_download_bytes": 1500})
	ctx := context.Background()
	rc, info, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "f1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "jpeg bytes" || info.MIME != "image/jpeg" || info.Size != 10 {
		t.Fatalf("got %q %+v %v", b, info, err)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "big"}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("config cap: %v", err)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "f1", MaxBytes: 5}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("request cap: %v", err)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "nope"}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatalf("unknown file: %v", err)
	}
}

func TestCappedBodyWhenSizeUnknown(t *testing.T) {
	t.Parallel()
	c := &cappedBody{rc: io.NopCloser(strings.NewReader("0123456789")), left: 4}
	_, err := io.ReadAll(c)
	if channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatal(err)
	}
}

func TestSetCommands(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	err := a.SetCommands(context.Background(), []channel.MenuEntry{
		{Name: "/New", Description: "start a new session"},
		{Name: "status", Description: ""},
		{Name: "code-review", Description: "x"},
		{Name: "bad.name", Description: "x"},
		{Name: "this_command_name_is_far_too_long_x", Description: "x"},
		{Name: "new", Description: "duplicate"},
		{Name: "help", Description: strings.Repeat("d", 300)},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Commands()
	// claude's code-review is offered as /code_review: Telegram allows no '-'.
	if len(got) != 4 || got[0] != (telegramtest.BotCommand{Command: "new", Description: "start a new session"}) ||
		got[1] != (telegramtest.BotCommand{Command: "status", Description: "status"}) ||
		got[2] != (telegramtest.BotCommand{Command: "code_review", Description: "x"}) || len(got[3].Description) != 256 {
		t.Fatalf("commands %+v", got)
	}
}

// A send Telegram carried out but whose answer was lost (connection
// dropped, a malformed 200, no answer before the deadline) is reported as
// uncertain, so the host does not post it a second time; a send that
// never reached Telegram is not.
func TestLostAnswerIsUncertain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    telegramtest.Failure
	}{
		{"dropped", telegramtest.AcceptedThenDropped()},
		{"malformed", telegramtest.AcceptedMalformed()},
		{"silence", telegramtest.AcceptedSilence()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Fail("sendMessage", 1, tc.f)
			a := newTestAdapter(t, srv, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := a.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi", Format: channel.FormatPlain})
			if channel.CodeOf(err) != channel.CodeUncertain {
				t.Fatalf("error %v, want uncertain", err)
			}
			if n := len(srv.Sent()); n != 1 {
				t.Fatalf("%d messages carried out, want 1 (sent once, never retried)", n)
			}
		})
	}
	srv := newServer(t)
	srv.Fail("sendMessage", 1, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	a := newTestAdapter(t, srv, nil)
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "hi", Format: channel.FormatPlain}); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Fatalf("a 502 is a definite failure: %v", err)
	}
}

// TestParallelSendsKeepTheirConnections: the host sends to many chats at
// once; the connections those sends opened stay open for the next ones
// instead of being closed and dialled again for every message (the
// default transport keeps 2 idle connections per host). A gate in front
// of the API holds each burst until all its sends are in flight, so each
// burst needs burst connections at the same time.
func TestParallelSendsKeepTheirConnections(t *testing.T) {
	t.Parallel()
	const burst, bursts = 16, 5
	var mu sync.Mutex
	arrived, release := 0, make(chan struct{})
	var dials atomic.Int32
	gate := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		wait := release
		if arrived == burst {
			arrived = 0
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		<-wait
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true,"result":{"message_id":7,"date":0,"chat":{"id":1,"type":"private"}}}`))
	}))
	gate.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	gate.Start()
	t.Cleanup(gate.Close)
	a := New()
	cfg := fmt.Sprintf(`{"token": %q, "api_endpoint": %q}`, testToken, gate.URL+"/bot%s/%s")
	if err := a.Configure(context.Background(), schema.Config{Instance: "tg", JSON: []byte(cfg)}); err != nil {
		t.Fatal(err)
	}

	for range bursts {
		var wg sync.WaitGroup
		for c := range burst {
			wg.Go(func() {
				if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: strconv.Itoa(c + 1), Text: "hi"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	// burst connections are needed; a few more may be dialled when a
	// burst starts before the last one's connections are back in the pool.
	if n := int(dials.Load()); n > 2*burst {
		t.Errorf("%d connections for %d bursts of %d parallel sends, want at most %d: connections are closed after each send and dialled again",
			n, bursts, burst, 2*burst)
	}
}

// TestReact: a reaction from Telegram's list is set on the message (❤️ as
// ❤), replacing the bot's earlier one; Remove clears it; an emoji Telegram
// does not offer is refused before any call.
func TestReact(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	for _, e := range []string{"👀", "❤️"} {
		if err := a.React(ctx, channel.ReactRequest{ChatID: "1001", MessageID: "7", Emoji: e}); err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Reaction(1001, 7); got != "❤" {
		t.Errorf("reaction %q, want ❤", got)
	}
	if err := a.React(ctx, channel.ReactRequest{ChatID: "1001", MessageID: "7", Remove: true}); err != nil || srv.Reaction(1001, 7) != "" {
		t.Errorf("remove: %v, left %q", err, srv.Reaction(1001, 7))
	}
	n := len(srv.Requests("setMessageReaction"))
	if err := a.React(ctx, channel.ReactRequest{ChatID: "1001", MessageID: "7", Emoji: "🦖"}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("🦖: %v", err)
	}
	if len(srv.Requests("setMessageReaction")) != n {
		t.Error("a refused emoji reached the API")
	}
}
