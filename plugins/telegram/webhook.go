package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// secretHeader carries webhook_secret on every webhook request.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxWebhookBody bounds one webhook request.
const maxWebhookBody = 4 << 20

// runWebhook receives updates on webhook_listen. Telegram treats any answer
// other than 2xx as a failed delivery and retries it later, so an update is
// answered 200 only after inbox.Deliver returned nil: the same guarantee
// as the polling offset. TLS is left to a reverse proxy in front.
//
// When webhook_url is set, setWebhook is called (retried in the background
// until it succeeds) with webhook_secret and the allowed update kinds.
func (a *Adapter) runWebhook(ctx context.Context, inbox channel.Inbox) error {
	ln, err := net.Listen("tcp", a.cfg.WebhookListen)
	if err != nil {
		return fmt.Errorf("telegram webhook: listen on %s: %w", a.cfg.WebhookListen, err)
	}
	a.mu.Lock()
	a.webhookAddr = ln.Addr().String()
	close(a.listening)
	a.mu.Unlock()
	a.log.Info("receiving telegram updates by webhook", "listen", ln.Addr().String())

	srv := &http.Server{Handler: a.webhookHandler(inbox), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if a.cfg.WebhookURL != "" {
		go a.setWebhook(ctx)
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("telegram webhook: serve: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

func (a *Adapter) setWebhook(ctx context.Context) {
	r := newRetrier(a)
	p := tgbotapi.Params{
		"url":             a.cfg.WebhookURL,
		"secret_token":    a.cfg.WebhookSecret,
		"allowed_updates": allowedUpdates,
	}
	for {
		_, err := a.callTimeout(ctx, "setWebhook", p, callTimeout)
		if err == nil {
			a.log.Info("telegram webhook set")
			a.reportReady()
			return
		}
		if ctx.Err() != nil || r.wait(ctx, err) != nil {
			return
		}
	}
}

func (a *Adapter) webhookHandler(inbox channel.Inbox) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		got := r.Header.Get(secretHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(a.cfg.WebhookSecret)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		u, err := decodeUpdate(json.RawMessage(body))
		if err != nil {
			// Refusing would make Telegram resend it forever.
			a.log.Warn("skipping a webhook update that does not decode", "update_id", u.UpdateID, "error", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		me := a.me.Load()
		if me == nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		if m, press, ok := a.inbound(u, *me, body); ok {
			if err := inbox.Deliver(r.Context(), m); err != nil {
				a.log.Warn("host did not store a webhook update; telegram will resend it", "update_id", u.UpdateID, "error", err)
				http.Error(w, "not stored", http.StatusServiceUnavailable)
				return
			}
			if press != "" {
				a.answerPresses(r.Context(), []string{press})
			}
		}
		w.WriteHeader(http.StatusOK)
	})
}
