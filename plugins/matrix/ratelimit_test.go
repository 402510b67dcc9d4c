package matrix

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// limiter is a proxy in front of the homeserver that answers the first
// message send with 429 M_LIMIT_EXCEEDED.
type limiter struct {
	mu    sync.Mutex
	sends int
}

func (l *limiter) wrap(t *testing.T, target string) string {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/send/m.room.message/") {
			l.mu.Lock()
			l.sends++
			n := l.sends
			l.mu.Unlock()
			if n == 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"errcode":"M_LIMIT_EXCEEDED","error":"Too many requests","retry_after_ms":1500}`))
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRateLimitWaitedOut: a send the homeserver answers with
// M_LIMIT_EXCEEDED is sent again after the retry_after_ms it asked for
// (the adapter's sleep, recorded here, not slept), once.
func TestRateLimitWaitedOut(t *testing.T) {
	t.Parallel()
	h, ctx := startHS(t)
	alice := h.srv.Client(h.alice)
	room := createRoom(t, ctx, alice, &mautrix.ReqCreateRoom{Invite: []id.UserID{h.bot.UserID}})
	lim := &limiter{}
	cfg := h.botConfig(lim.wrap(t, h.srv.URL), true)
	var mu sync.Mutex
	var waited []time.Duration
	a, _, _ := runReady(t, cfg, t.TempDir(), func(a *Adapter) {
		a.sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			waited = append(waited, d)
			mu.Unlock()
			return ctx.Err()
		}
	})
	h.waitJoined(t, ctx, alice, room.RoomID)
	resp, err := a.Send(ctx, channel.SendRequest{ChatID: room.RoomID.String(), Text: "after the limit"})
	if err != nil || len(resp.MessageIDs) != 1 {
		t.Fatalf("send: %+v %v", resp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waited) != 1 || waited[0] != 1500*time.Millisecond {
		t.Errorf("waited %v, want once 1.5s", waited)
	}
	if lim.sends != 2 {
		t.Errorf("%d sends, want 2 (the limited one and its retry)", lim.sends)
	}
}
