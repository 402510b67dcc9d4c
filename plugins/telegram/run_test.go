package telegram

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

var alice = telegramtest.User{ID: 1001, FirstName: "Alice", Username: "alice"}

func TestRunDeliversAndAdvancesOffset(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)

	srv.PushText(telegramtest.PrivateChat(1001), alice, "hello")
	srv.PushText(telegramtest.PrivateChat(1001), alice, "again")
	got := inbox.Wait(t, 2)
	if got[0].Text != "hello" || got[1].Text != "again" || got[0].ChatType != channel.ChatDirect || got[0].Sender.ID != "1001" {
		t.Fatalf("delivered %+v", got)
	}
	// The next poll confirms the batch.
	sdktest.WaitFor(t, "no update pending", func() bool { return srv.Pending() == 0 })
	if err := stop(); err != nil {
		t.Fatalf("Run returned %v after cancel, want nil", err)
	}
	for _, r := range srv.Requests("getUpdates") {
		if r.Params.Get("allowed_updates") == "" || r.Params.Get("timeout") != "1" {
			t.Fatalf("getUpdates params %v", r.Params)
		}
	}
}

// The offset moves only after Deliver returned nil: failed deliveries are
// fetched again, and a crash while Deliver blocks loses nothing.
func TestOffsetAdvancesOnlyAfterAck(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	id := srv.PushText(telegramtest.PrivateChat(1001), alice, "precious")

	// 1. Deliver blocks (the host has not stored it yet), then the plugin dies.
	a1 := newTestAdapter(t, srv, nil)
	blocked := make(chan struct{})
	inbox1 := &sdktest.Inbox{}
	inbox1.Decide = func(ctx context.Context, _ int, _ []channel.InboundMessage) error {
		close(blocked)
		<-ctx.Done()
		return ctx.Err()
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	stop1 := runAdapter(t, ctx1, cancel1, a1, inbox1)
	<-blocked
	if srv.Offset() > id || srv.Pending() != 1 {
		t.Fatalf("offset %d confirmed update %d before the host acked", srv.Offset(), id)
	}
	_ = stop1()

	// 2. A new process: the host fails twice, then stores.
	a2 := newTestAdapter(t, srv, nil)
	rec := &sleepRecorder{}
	a2.sleep = rec.sleep
	inbox2 := &sdktest.Inbox{}
	inbox2.Decide = func(_ context.Context, call int, _ []channel.InboundMessage) error {
		if call <= 2 {
			if srv.Offset() > id {
				t.Errorf("offset advanced after a failed delivery")
			}
			return errors.New("journal full")
		}
		return nil
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	stop2 := runAdapter(t, ctx2, cancel2, a2, inbox2)
	got := inbox2.Wait(t, 1)
	if got[0].Text != "precious" || inbox2.Calls() != 3 {
		t.Fatalf("stored %+v after %d calls", got, inbox2.Calls())
	}
	sdktest.WaitFor(t, "the update confirmed, none pending", func() bool { return srv.Offset() == id+1 && srv.Pending() == 0 })
	_ = stop2()
	if d := rec.Delays(); len(d) != 2 || d[0] != deliverPolicy.min || d[1] != 2*deliverPolicy.min {
		t.Fatalf("delivery backoff %v", d)
	}
}

// A rejected token never ends Run; the backoff grows to the long cap.
func TestUnauthorizedBacksOffToLongCap(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"token": "999:WRONG"})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &sleepRecorder{limit: 10, cancel: cancel}
	a.sleep = rec.sleep
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, &sdktest.Inbox{}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v, want nil after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 320 * time.Second, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	got := rec.Delays()
	if len(got) != len(want) {
		t.Fatalf("delays %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delay %d = %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	// One getMe per wait, each refused; polling never starts.
	reqs := srv.Requests("")
	if len(reqs) != len(want) {
		t.Fatalf("%d requests for %d waits", len(reqs), len(want))
	}
	for _, r := range reqs {
		if r.Method != "getMe" || !r.Unauthorized {
			t.Fatalf("request %+v", r)
		}
	}
}

func TestConflictIsRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("getUpdates", 3, telegramtest.Conflict())
	a := newTestAdapter(t, srv, nil)
	rec := &sleepRecorder{}
	a.sleep = rec.sleep
	runUntilStored(t, a, func() { srv.PushText(telegramtest.PrivateChat(1001), alice, "after conflict") })
	got := rec.Delays()
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("delays %v, want %v", got, want)
	}
}

func TestWebhookSetMeansConflict(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.SetWebhook("https://example.invalid/hook")
	a := newTestAdapter(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &sleepRecorder{limit: 3, cancel: cancel}
	a.sleep = rec.sleep
	if err := a.Run(ctx, &sdktest.Inbox{}); err != nil {
		t.Fatal(err)
	}
	if got := rec.Delays(); got[0] != conflictPolicy.min || got[2] != 4*conflictPolicy.min {
		t.Fatalf("delays %v", got)
	}
}

// getMe failing at startup (network down, 5xx, 429) is retried; the plugin
// starts receiving once it succeeds.
func TestStartupRetriesGetMe(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("getMe", 2, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	srv.Fail("getMe", 1, telegramtest.TooManyRequests(7))
	a := newTestAdapter(t, srv, nil)
	rec := &sleepRecorder{}
	a.sleep = rec.sleep
	got := runUntilStored(t, a, func() { srv.PushText(telegramtest.Supergroup(-100, "devs"), alice, "hi @ClawBot") })
	if !got[0].WasMentioned {
		t.Fatalf("mention not detected after getMe retries: %+v", got[0])
	}
	d := rec.Delays()
	if len(d) != 3 || d[0] != time.Second || d[1] != 2*time.Second || d[2] != 7*time.Second {
		t.Fatalf("delays %v", d)
	}
}

func TestNetworkDownNeverEndsRun(t *testing.T) {
	t.Parallel()
	addr := sdktest.FreeAddr(t) // connection refused from now on
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"api_endpoint": "http://" + addr + "/bot%s/%s"})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &sleepRecorder{limit: 7, cancel: cancel}
	a.sleep = rec.sleep
	if err := a.Run(ctx, &sdktest.Inbox{}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, d := range rec.Delays() {
		if d != want[i]*time.Second {
			t.Fatalf("delays %v", rec.Delays())
		}
	}
	// Errors of such calls never show the token.
	_, err := a.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "x"})
	if channel.CodeOf(err) != channel.CodeUnavailable || strings.Contains(err.Error(), "TEST-token") {
		t.Fatalf("send error %v", err)
	}
	if !strings.Contains(err.Error(), "<token>") {
		t.Fatalf("want the redacted URL in %q", err)
	}
}

func TestUndecodableUpdateIsSkipped(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.PushUpdate(map[string]any{"message": map[string]any{"message_id": "not a number", "chat": 5}})
	srv.PushUpdate(map[string]any{"poll": map[string]any{"id": "1"}})
	srv.PushText(telegramtest.PrivateChat(1001), alice, "still here")
	a := newTestAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	got := inbox.Wait(t, 1)
	sdktest.WaitFor(t, "no update pending", func() bool { return srv.Pending() == 0 })
	_ = stop()
	if len(got) != 1 || got[0].Text != "still here" {
		t.Fatalf("got %+v", got)
	}
}
