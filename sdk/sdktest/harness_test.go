package sdktest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
)

// recorder is a testing.TB that records Errorf and Log instead of failing
// the real test.
type recorder struct {
	testing.TB
	mu         sync.Mutex
	errs, logs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprint(args...))
}

func (r *recorder) recorded() (errs, logs string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n"), strings.Join(r.logs, "\n")
}

// stubborn is a channel whose Run returns only when release is closed,
// whatever its context says (stubborn false: when its context ends).
type stubborn struct {
	ignoreCtx bool
	release   chan struct{}
}

func (s *stubborn) Capabilities() channel.Capabilities {
	return channel.Capabilities{MaxTextLength: 10}
}
func (s *stubborn) Run(ctx context.Context, _ channel.Inbox) error {
	if s.ignoreCtx {
		<-s.release
		return nil
	}
	<-ctx.Done()
	return nil
}
func (s *stubborn) Send(context.Context, channel.SendRequest) (channel.SendResponse, error) {
	return channel.SendResponse{MessageIDs: []string{"1"}}, nil
}

// TestStopIsBounded: the teardown waits a bounded time for a Run that
// ignores cancellation and says so in a test error, instead of hanging;
// what the plugin logs goes to t.Log.
func TestStopIsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		ignoreCtx bool
		wantErr   string
	}{
		{"run returns on cancel", false, ""},
		{"run ignores cancel", true, "the channel's Run did not return within 100ms of its context being canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ch := &stubborn{ignoreCtx: tc.ignoreCtx, release: make(chan struct{})}
			defer close(ch.release)
			rec := &recorder{TB: t}
			p := sdk.Plugin{Name: "stubborn", Channel: ch, Configure: func(_ context.Context, cfg schema.Config) error {
				cfg.Logger.Info("configured by the test", "instance", cfg.Instance)
				return nil
			}}
			h, stop := start(rec, p, 100*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if diags, err := h.Plugin.Configure(ctx, schema.Config{Instance: "i1"}); err != nil || len(diags) > 0 {
				t.Fatalf("configure: %v %v", err, diags)
			}
			t0 := time.Now()
			stop()
			took := time.Since(t0)
			errs, logs := rec.recorded()
			if tc.wantErr == "" && errs != "" {
				t.Errorf("teardown errors for a well-behaved plugin: %s", errs)
			}
			if tc.wantErr != "" && !strings.Contains(errs, tc.wantErr) {
				t.Errorf("teardown errors %q, want %q", errs, tc.wantErr)
			}
			if took > 5*time.Second {
				t.Errorf("teardown took %s", took)
			}
			if !strings.Contains(logs, "configured by the test") || !strings.Contains(logs, "instance=i1") {
				t.Errorf("the plugin's log line did not reach t.Log; got:\n%s", logs)
			}
		})
	}
}

// editor records the edits it gets.
type editor struct {
	stubborn
	mu    sync.Mutex
	edits []channel.EditRequest
}

func (e *editor) Edit(_ context.Context, req channel.EditRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.edits = append(e.edits, req)
	return nil
}

// TestEditButtonsOverTheWire: an edit's buttons reach the plugin as the
// host sent them (a turn card's Stop button), and an edit without
// buttons arrives without any.
func TestEditButtonsOverTheWire(t *testing.T) {
	t.Parallel()
	ch := &editor{stubborn: stubborn{release: make(chan struct{})}}
	defer close(ch.release)
	h := Start(t, sdk.Plugin{Name: "editor", Channel: ch})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.Plugin.Configure(ctx, schema.Config{Instance: "i1"}); err != nil {
		t.Fatal(err)
	}
	rows := [][]channel.Button{{{ID: "/stop", Label: "⏹ Stop"}}}
	for _, req := range []channel.EditRequest{
		{ChatID: "c", MessageID: "7", Text: "⏳ Working", Buttons: rows},
		{ChatID: "c", MessageID: "7", Text: "the answer"},
	} {
		if err := h.Plugin.Edit(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(ch.edits) != 2 || len(ch.edits[0].Buttons) != 1 || ch.edits[0].Buttons[0][0] != rows[0][0] || ch.edits[1].Buttons != nil {
		t.Errorf("edits %+v", ch.edits)
	}
}
