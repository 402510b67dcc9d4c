package telegram

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const testToken = "123456:TEST-token_secret"

// newTestAdapter returns an adapter configured against srv, with extra
// config attributes merged in, whose Send and Edit take requests as
// clawhost sends them (hostAdapter).
func newTestAdapter(t *testing.T, srv *telegramtest.Server, extra map[string]any) hostAdapter {
	t.Helper()
	a, _ := newLoggedAdapter(t, srv, extra)
	return hostAdapter{a}
}

// hostAdapter is an Adapter whose Send and Edit first do what clawhost does
// to every request: a markdown text and its captions get their rendering
// in Telegram's HTML subset (markup.RenderSend), which the plugin sends;
// it links no markdown parser. Adapter.Send is the plugin alone.
type hostAdapter struct{ *Adapter }

func (a hostAdapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	markup.RenderSend(&req, channel.MarkupHTMLSubset)
	return a.Adapter.Send(ctx, req)
}

func (a hostAdapter) Edit(ctx context.Context, req channel.EditRequest) error {
	markup.RenderEdit(&req, channel.MarkupHTMLSubset)
	return a.Adapter.Edit(ctx, req)
}

// newLoggedAdapter is newTestAdapter with its log (all levels) captured.
func newLoggedAdapter(t *testing.T, srv *telegramtest.Server, extra map[string]any) (*Adapter, *sdktest.Log) {
	t.Helper()
	logs := &sdktest.Log{}
	log := logs.Logger()
	b := sdktest.ConfigJSON(t, map[string]any{"token": testToken, "api_endpoint": srv.APIEndpoint(), "poll_timeout": 1}, extra)
	a := New()
	if err := a.Configure(context.Background(), schema.Config{Instance: "tg", JSON: b, Logger: log}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	return a, logs
}

// newFake is a fresh fake Telegram and a test adapter configured against
// it (newTestAdapter).
func newFake(t *testing.T) (*telegramtest.Server, hostAdapter) {
	t.Helper()
	srv := newServer(t)
	return srv, newTestAdapter(t, srv, nil)
}

// sendOK sends req with a (an Adapter or a hostAdapter), failing the
// test on an error.
func sendOK(t *testing.T, a interface {
	Send(context.Context, channel.SendRequest) (channel.SendResponse, error)
}, req channel.SendRequest) channel.SendResponse {
	t.Helper()
	res, err := a.Send(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func newServer(t *testing.T) *telegramtest.Server {
	t.Helper()
	srv := telegramtest.NewServer(testToken)
	t.Cleanup(srv.Close)
	return srv
}

// sleepRecorder replaces Adapter.sleep: it records the delays and returns
// at once; after limit calls it cancels the run.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
	limit  int
	cancel context.CancelFunc
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	stop := s.limit > 0 && len(s.delays) >= s.limit
	s.mu.Unlock()
	if stop {
		s.cancel()
		return context.Canceled
	}
	return ctx.Err()
}

func (s *sleepRecorder) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// runAdapter runs a in the background and returns a stop function that
// cancels and waits for Run's result.
func runAdapter(t *testing.T, ctx context.Context, cancel context.CancelFunc, a interface {
	Run(context.Context, channel.Inbox) error
}, inbox channel.Inbox) func() error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, inbox) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(10 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// runUntilStored runs a with a fresh inbox, calls push (the fake's
// update), stops a once the host has stored one message and returns the
// stored messages.
func runUntilStored(t *testing.T, a interface {
	Run(context.Context, channel.Inbox) error
}, push func()) []channel.InboundMessage {
	t.Helper()
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	push()
	got := inbox.Wait(t, 1)
	_ = stop()
	return got
}

// webhookListenAddr returns a's bound webhook address once it listens.
func (a *Adapter) webhookListenAddr(ctx context.Context) (string, error) {
	select {
	case <-a.listening:
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.webhookAddr, nil
	case <-ctx.Done():
		return "", fmt.Errorf("webhook not listening: %w", ctx.Err())
	}
}
