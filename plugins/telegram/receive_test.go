package telegram

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// A token Telegram rejects, with real time: the plugin stays up, says
// clearly what is wrong, never shows the token, and calls the API about
// once per backoff step instead of hammering it.
func TestRejectedTokenRequestRateStaysLow(t *testing.T) {
	t.Parallel()
	const badToken = "777:REJECTED-secret_value"
	srv := newServer(t)
	a, logs := newLoggedAdapter(t, srv, map[string]any{"token": badToken})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, &sdktest.Inbox{}) }()

	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Run ended on a rejected token: %v", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	// The first backoff step is authPolicy.min (10s): in 1.5s, one call.
	reqs := srv.Requests("")
	if len(reqs) != 1 || reqs[0].Method != "getMe" || !reqs[0].Unauthorized {
		t.Fatalf("requests with a rejected token in 1.5s: %+v", reqs)
	}
	out := logs.String()
	if !strings.Contains(out, "rejected the bot token (401 Unauthorized)") {
		t.Fatalf("no clear error in the log:\n%s", out)
	}
	if strings.Contains(out, badToken) || strings.Contains(out, "REJECTED-secret") {
		t.Fatalf("token in the log:\n%s", out)
	}
}

// 401 while polling (token revoked after startup) uses the same long
// backoff as at startup.
func TestUnauthorizedWhilePolling(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("getUpdates", -1, telegramtest.Unauthorized())
	a := newTestAdapter(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &sleepRecorder{limit: 4, cancel: cancel}
	a.sleep = rec.sleep
	if err := a.Run(ctx, &sdktest.Inbox{}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second}
	got := rec.Delays()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
}

// fastSleep records the requested delays but waits only a moment.
type fastSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (f *fastSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.delays = append(f.delays, d)
	f.mu.Unlock()
	return channel.Sleep(ctx, 5*time.Millisecond)
}

func (f *fastSleep) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.delays)
}

// The Bot API is unreachable when the plugin starts and comes up later:
// Run keeps retrying getMe, then learns the bot's name (mentions work) and
// receives.
func TestBotAPIDownAtStartComesUpLater(t *testing.T) {
	t.Parallel()
	addr := sdktest.FreeAddr(t) // connection refused until the server starts

	// Configure works offline.
	a := newTestAdapter(t, newServer(t), map[string]any{"api_endpoint": "http://" + addr + "/bot%s/%s"})
	fs := &fastSleep{}
	a.sleep = fs.sleep
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	sdktest.WaitFor(t, "three failed polls", func() bool { return fs.count() >= 3 })
	if a.me.Load() != nil {
		t.Fatal("identified without an API")
	}

	var ln2 net.Listener
	var err error
	sdktest.WaitFor(t, "the address free again", func() bool { ln2, err = net.Listen("tcp", addr); return err == nil })
	srv := telegramtest.NewServerWithListener(testToken, ln2)
	t.Cleanup(srv.Close)
	srv.PushText(telegramtest.Supergroup(-100, "devs"), alice, "now @clawbot?")
	got := inbox.Wait(t, 1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got[0].Text != "now @clawbot?" || !got[0].WasMentioned {
		t.Fatalf("got %+v", got[0])
	}
	fs.mu.Lock()
	d := fs.delays
	fs.mu.Unlock()
	if d[0] != time.Second || d[1] != 2*time.Second || d[2] != 4*time.Second {
		t.Fatalf("network backoff %v", d)
	}
}

// Updates of unknown kinds, with unknown fields, empty texts and service
// messages are skipped with a debug line; captions alone are text; the
// offset moves past all of them.
func TestOddUpdatesThroughRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	chat := telegramtest.PrivateChat(1001)
	srv.PushUpdate(map[string]any{"message_reaction": map[string]any{"chat": chat, "message_id": 1, "date": 1}})
	srv.PushUpdate(map[string]any{"business_message": map[string]any{"message_id": 2}})
	srv.PushUpdate(map[string]any{"message": map[string]any{"message_id": 3, "date": 1, "chat": chat, "from": alice, "text": ""}})
	srv.PushUpdate(map[string]any{"message": map[string]any{"message_id": 4, "date": 1, "chat": chat, "from": alice, "pinned_message": map[string]any{"message_id": 1}}})
	srv.PushUpdate(map[string]any{"message": map[string]any{"message_id": 5, "date": 1, "chat": chat, "from": alice,
		"caption": "only a caption", "photo": []map[string]any{{"file_id": "p", "file_unique_id": "u", "width": 1, "height": 1}},
		"brand_new_field": map[string]any{"nested": []int{1}}}})
	srv.PushUpdate(map[string]any{"edited_message": map[string]any{"message_id": 5, "date": 1, "edit_date": 2, "chat": chat, "from": alice, "caption": "edited caption",
		"photo": []map[string]any{{"file_id": "p", "file_unique_id": "u", "width": 1, "height": 1}}}})
	last := srv.PushText(chat, alice, "plain")
	a, logs := newLoggedAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	got := inbox.Wait(t, 3)
	sdktest.WaitFor(t, "the offset past the last update", func() bool { return srv.Offset() == last+1 })
	_ = stop()
	if len(got) != 3 {
		t.Fatalf("stored %+v", got)
	}
	if got[0].Text != "only a caption" || len(got[0].Media) != 1 || got[0].Media[0].Ref != "p" || got[0].Edited {
		t.Fatalf("caption only: %+v", got[0])
	}
	if got[1].Text != "edited caption" || !got[1].Edited || got[1].MessageID != "5" {
		t.Fatalf("edit: %+v", got[1])
	}
	if got[2].Text != "plain" {
		t.Fatalf("text: %+v", got[2])
	}
	out := logs.String()
	for _, want := range []string{"kinds=message_reaction", "kinds=business_message", "ignoring an update with nothing for the agent", "update_id=3"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// A command for another bot is not delivered (the host strips any
// "@bot" suffix and would run it as its own), but the offset passes it.
func TestCommandForOtherBotNotDelivered(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	g := telegramtest.Supergroup(-100, "devs")
	srv.PushText(g, alice, "/new@otherbot")
	srv.PushText(g, alice, "/new@clawbot now")
	last := srv.PushText(g, alice, "/new")
	a := newTestAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	got := inbox.Wait(t, 2)
	sdktest.WaitFor(t, "the offset past the last update", func() bool { return srv.Offset() == last+1 })
	_ = stop()
	if len(got) != 2 || got[0].CommandText != "/new now" || !got[0].WasMentioned || got[1].CommandText != "" || got[1].WasMentioned {
		t.Fatalf("got %+v", got)
	}
}

// poll_timeout = 0 (short polling) pauses between empty answers instead
// of spinning; an absent poll_timeout is the default.
func TestShortPollingDoesNotSpin(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"poll_timeout": 0})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &sleepRecorder{limit: 3, cancel: cancel}
	a.sleep = rec.sleep
	if err := a.Run(ctx, &sdktest.Inbox{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range rec.Delays() {
		if d != shortPollPause {
			t.Fatalf("delays %v", rec.Delays())
		}
	}
	if n := len(srv.Requests("getUpdates")); n != 3 {
		t.Fatalf("%d getUpdates for 3 pauses", n)
	}

	b := newTestAdapter(t, srv, map[string]any{"poll_timeout": nil})
	if b.cfg.PollTimeout != DefaultPollTimeout {
		t.Fatalf("absent poll_timeout = %v", b.cfg.PollTimeout)
	}
}

// A forum topic round trip: the topic of an inbound message is where the
// reply goes.
func TestTopicRoundTrip(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	forum := telegramtest.Chat{ID: -100777, Type: "supergroup", Title: "Forum", IsForum: true}
	srv.PushUpdate(map[string]any{"message": map[string]any{"message_id": 50, "message_thread_id": 42, "is_topic_message": true,
		"date": 1, "chat": forum, "from": alice, "text": "@clawbot in the topic",
		"entities": telegramtest.Entities("@clawbot in the topic")}})
	a := newTestAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	in := inbox.Wait(t, 1)[0]
	_ = stop()
	if in.ThreadID != "42" || !in.WasMentioned || in.ChatType != channel.ChatGroup {
		t.Fatalf("inbound %+v", in)
	}
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: in.ChatID, ThreadID: in.ThreadID, ReplyToMessageID: in.MessageID, Text: "answer"}); err == nil {
		t.Fatal("send with a canceled context succeeded")
	}
	sendOK(t, a, channel.SendRequest{ChatID: in.ChatID, ThreadID: in.ThreadID, ReplyToMessageID: in.MessageID, Text: "answer"})
	if err := a.SetTyping(context.Background(), channel.TypingRequest{ChatID: in.ChatID, ThreadID: in.ThreadID, On: true}); err != nil {
		t.Fatal(err)
	}
	s := srv.Sent()
	if len(s) != 1 || s[0].ChatID != "-100777" || s[0].ThreadID != 42 || s[0].ReplyTo != 50 {
		t.Fatalf("sent %+v", s)
	}
	if r := srv.Requests("sendChatAction"); len(r) != 1 || r[0].Params.Get("message_thread_id") != "42" {
		t.Fatalf("typing %+v", r)
	}
}
