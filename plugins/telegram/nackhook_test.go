package telegram_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestNackedWebhookUpdateIsAnswered503AtOnce: with a webhook, an update
// the host cannot store is answered 503 as soon as the host refuses it
// (with the host's delay as Retry-After), not held open: Telegram sends it
// again, and that delivery, stored, is answered 200.
func TestNackedWebhookUpdateIsAnswered503AtOnce(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer("42:HOOK")
	t.Cleanup(srv.Close)
	addr := sdktest.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const secret = "s3cret-s3cret-s3cret"
	cfg, _ := json.Marshal(map[string]any{"token": srv.Token(), "api_endpoint": srv.APIEndpoint(), "webhook_listen": addr, "webhook_secret": secret})
	h, s := startReceiving(t, ctx, cfg)
	post := func() <-chan *http.Response {
		out := make(chan *http.Response, 1)
		go func() {
			upd := `{"update_id":7,"message":{"message_id":5,"date":1,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice"},"text":"store me"}}`
			for {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/", strings.NewReader(upd))
				req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
				resp, err := http.DefaultClient.Do(req)
				if err != nil && ctx.Err() == nil {
					continue // the listener is not up yet
				}
				if resp != nil {
					resp.Body.Close()
				}
				out <- resp
				return
			}
		}()
		return out
	}
	answer := func(c <-chan *http.Response) *http.Response {
		t.Helper()
		select {
		case r := <-c:
			if r == nil {
				t.Fatal("the webhook never answered")
			}
			return r
		case <-ctx.Done():
			t.Fatal("the webhook did not answer")
			return nil
		}
	}
	first := post()
	d := receiveOne(t, s)
	if err := h.Plugin.Nack(ctx, "disk full", 3*time.Second, d.ID); err != nil {
		t.Fatal(err)
	}
	// Answered before the host's 3 s delay could pass: the refusal itself
	// ends the request.
	r := answer(first)
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "3" {
		t.Fatalf("refused update answered %d, Retry-After %q; want 503, 3", r.StatusCode, r.Header.Get("Retry-After"))
	}
	second := post()
	d2 := receiveOne(t, s)
	if d2.Message.Text != "store me" || d2.ID == d.ID {
		t.Fatalf("sent again %d %+v", d2.ID, d2.Message)
	}
	if err := h.Plugin.Ack(ctx, d2.ID); err != nil {
		t.Fatal(err)
	}
	if r := answer(second); r.StatusCode != http.StatusOK {
		t.Fatalf("stored update answered %d, want 200", r.StatusCode)
	}
}
