package webchat_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/schema"
)

// running is an adapter served on loopback with a fake inbox.
type running struct {
	*webchat.Adapter
	inbox *webchattest.Inbox
	stop  func()
}

type setup struct {
	listen  string
	token   string
	dataDir string
	opts    webchat.Options
}

func start(t *testing.T, s setup) *running {
	t.Helper()
	if s.listen == "" {
		s.listen = "127.0.0.1:0"
	}
	cfg := map[string]any{"listen": s.listen}
	if s.token != "" {
		cfg["access_token"] = s.token
	}
	js, _ := json.Marshal(cfg)
	a := webchat.New(s.opts)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := a.Configure(context.Background(), schema.Config{Instance: "web", DataDir: s.dataDir, JSON: js, Logger: log}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inbox := webchattest.NewInbox()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, inbox) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			inbox.Release()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("run: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("run did not return within 5s of cancel")
			}
		})
	}
	t.Cleanup(stop)
	return &running{Adapter: a, inbox: inbox, stop: stop}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	return len(p), nil
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect is a new browser (own identity) with an open socket.
func connect(t *testing.T, ctx context.Context, url string) (*webchattest.Client, webchat.Event) {
	t.Helper()
	c, err := webchattest.NewClient(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	hello, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, hello
}

func nextOf(t *testing.T, ctx context.Context, c *webchattest.Client, typ string) webchat.Event {
	t.Helper()
	ev, err := c.NextOf(ctx, typ)
	if err != nil {
		t.Fatalf("waiting for %s event: %v", typ, err)
	}
	return ev
}

// fakeClock records AfterFunc calls so tests fire timers by hand.
type fakeClock struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{d: d, f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

// fire runs every pending timer.
func (c *fakeClock) fire() {
	c.mu.Lock()
	var fs []func()
	for _, tm := range c.timers {
		if !tm.stopped {
			tm.stopped = true
			fs = append(fs, tm.f)
		}
	}
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ds []time.Duration
	for _, tm := range c.timers {
		if !tm.stopped {
			ds = append(ds, tm.d)
		}
	}
	return ds
}
