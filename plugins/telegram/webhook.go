package telegram

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
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
// answered 200 only after the host stored it (channel.Offer returned nil):
// the same guarantee as the polling offset. A host that cannot store it
// refuses at once, and the update is answered 503 at once. TLS is left to a reverse proxy in front.
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

// webhookHandler checks each request's secret (in constant time) and
// answers an address that sent webhookMaxFails wrong secrets within
// webhookFailWindow with 429 for webhookLockout, whatever it sends. Behind
// a reverse proxy every request has the proxy's address: a lockout then
// delays Telegram's deliveries too (it retries them), it loses none.
func (a *Adapter) webhookHandler(inbox channel.Inbox) http.Handler {
	fails := newFailLimiter(a.now)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		addr, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			addr = r.RemoteAddr
		}
		if wait, locked := fails.locked(addr); locked {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
			http.Error(w, "too many wrong secrets", http.StatusTooManyRequests)
			return
		}
		// Digests of equal length: the comparison takes the same time
		// whatever the header's length, too.
		got, want := sha256.Sum256([]byte(r.Header.Get(secretHeader))), sha256.Sum256([]byte(a.cfg.WebhookSecret))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			if fails.fail(addr) {
				a.log.Warn("telegram webhook: too many wrong secrets; the address is refused for a while", "remote", addr, "for", webhookLockout.String())
			}
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
			if err := channel.Offer(r.Context(), inbox, m); err != nil {
				a.log.Warn("host did not store a webhook update; telegram will resend it", "update_id", u.UpdateID, "error", err)
				var ce *channel.Error
				if errors.As(err, &ce) && ce.RetryAfter > 0 {
					w.Header().Set("Retry-After", strconv.Itoa(max(1, int(ce.RetryAfter.Round(time.Second)/time.Second))))
				}
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

// Limits on wrong webhook secrets, per remote address.
const (
	webhookMaxFails   = 10
	webhookFailWindow = time.Minute
	webhookLockout    = 5 * time.Minute
	// maxFailAddrs is how many addresses are remembered before those
	// whose window and lockout are over are forgotten.
	maxFailAddrs = 4096
)

// failLimiter counts wrong secrets per address in fixed windows of
// webhookFailWindow and locks an address out for webhookLockout once it
// reaches webhookMaxFails in one. It is safe for concurrent use.
type failLimiter struct {
	now   func() time.Time
	mu    sync.Mutex
	addrs map[string]*failCount
}

type failCount struct {
	start time.Time // of the current window
	n     int       // wrong secrets in it
	until time.Time // end of the lockout; zero when none
}

func newFailLimiter(now func() time.Time) *failLimiter {
	return &failLimiter{now: now, addrs: map[string]*failCount{}}
}

// locked reports whether addr is locked out, and for how much longer.
func (l *failLimiter) locked(addr string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.addrs[addr]
	if c == nil {
		return 0, false
	}
	if wait := c.until.Sub(l.now()); wait > 0 {
		return wait, true
	}
	return 0, false
}

// fail counts one wrong secret from addr; it reports whether that started
// a lockout.
func (l *failLimiter) fail(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.addrs[addr]
	if c == nil {
		if len(l.addrs) >= maxFailAddrs {
			l.prune(now)
		}
		c = &failCount{start: now}
		l.addrs[addr] = c
	}
	if now.Sub(c.start) >= webhookFailWindow {
		c.start, c.n = now, 0
	}
	c.n++
	if c.n >= webhookMaxFails {
		c.until, c.start, c.n = now.Add(webhookLockout), now, 0
		return true
	}
	return false
}

// prune forgets the addresses whose window and lockout are over.
func (l *failLimiter) prune(now time.Time) {
	for a, c := range l.addrs {
		if now.Sub(c.start) >= webhookFailWindow && !now.Before(c.until) {
			delete(l.addrs, a)
		}
	}
}
