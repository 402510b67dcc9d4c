package agentend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/sdk/hook"
)

// fakeHooks fails the first fails calls of each instance, then answers;
// it records every call's instance and call id, and signals each call.
type fakeHooks struct {
	mu    sync.Mutex
	fails map[string]int
	calls []string
	call  chan struct{}
	block chan struct{} // when set, each call waits for it
}

func (f *fakeHooks) AgentEnd(_ context.Context, instance string, end hook.End, _ time.Duration) (bool, error) {
	if instance == "tg" {
		return false, nil
	}
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	f.calls = append(f.calls, instance+"/"+end.CallID)
	fail := f.fails[instance] > 0
	if fail {
		f.fails[instance]--
	}
	f.mu.Unlock()
	f.call <- struct{}{}
	if fail {
		return true, errors.New("unavailable")
	}
	return true, nil
}

func (f *fakeHooks) IsEndHook(instance string) bool { return instance != "tg" }

// TestNotifyRetriesWithTheSameCallID: Notify returns before any hook is
// called; a failing hook is called again, after the backoff on the
// injected clock, with the same call id, until it answers; the next hook
// in order is called once.
func TestNotifyRetriesWithTheSameCallID(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{fails: map[string]int{"index": 2}, call: make(chan struct{}, 16), block: make(chan struct{})}
	clk := tstimetest.NewFake(time.Unix(1_700_000_000, 0))
	n := New(context.Background(), h, clk, hclog.NewNullLogger(), "")
	n.Notify(Settings{Hooks: []string{"tg", "index", "notify"}, Timeout: time.Second}, hook.End{CallID: "42"})
	// Notify returned while the hook is blocked: off the reply's path.
	close(h.block)
	<-h.call // index, attempt 1
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("no backoff timer armed after a failure")
	}
	clk.Advance(FirstRetry)
	<-h.call // index, attempt 2
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("no second backoff timer")
	}
	clk.Advance(2 * FirstRetry)
	<-h.call // index, attempt 3: answers
	<-h.call // notify
	n.Wait()
	want := []string{"index/42", "index/42", "index/42", "notify/42"}
	if len(h.calls) != len(want) {
		t.Fatalf("calls %v, want %v", h.calls, want)
	}
	for i := range want {
		if h.calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", h.calls, want)
		}
	}
}

// TestNotifyGivesUp: a hook that never answers is called Attempts times
// and then given up; a stopped host stops retrying.
func TestNotifyGivesUp(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{fails: map[string]int{"index": 100}, call: make(chan struct{}, 16)}
	clk := tstimetest.NewFake(time.Unix(1_700_000_000, 0))
	n := New(context.Background(), h, clk, hclog.NewNullLogger(), "")
	n.Notify(Settings{Hooks: []string{"index"}}, hook.End{CallID: "7"})
	for i := range Attempts {
		<-h.call
		if i < Attempts-1 {
			if !clk.BlockUntil(1, 10*time.Second) {
				t.Fatal("no backoff timer")
			}
			clk.Advance(time.Hour)
		}
	}
	n.Wait()
	if len(h.calls) != Attempts {
		t.Fatalf("%d calls, want %d", len(h.calls), Attempts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	h2 := &fakeHooks{fails: map[string]int{"index": 100}, call: make(chan struct{}, 16)}
	n2 := New(ctx, h2, clk, hclog.NewNullLogger(), "")
	n2.Notify(Settings{Hooks: []string{"index"}}, hook.End{CallID: "8"})
	<-h2.call
	cancel()
	n2.Wait()
	if len(h2.calls) != 1 {
		t.Fatalf("%d calls after the stop, want 1", len(h2.calls))
	}
}

// TestSpoolSurvivesAStop: an event whose hook has not answered when the
// host stops stays in the spool (0600) and the next start delivers it
// again, with the same call id, to the hooks the configuration still
// lists; an answered event leaves nothing behind.
func TestSpoolSurvivesAStop(t *testing.T) {
	t.Parallel()
	spool := filepath.Join(t.TempDir(), "agent-end")
	clk := tstimetest.NewFake(time.Unix(1_700_000_000, 0))
	ctx, cancel := context.WithCancel(context.Background())
	h := &fakeHooks{fails: map[string]int{"index": 100}, call: make(chan struct{}, 16)}
	n := New(ctx, h, clk, hclog.NewNullLogger(), spool)
	n.Notify(Settings{Hooks: []string{"index"}}, hook.End{CallID: "42", ReplyText: "done", ToolSteps: []hook.ToolStep{{Name: "Read"}}})
	<-h.call
	cancel() // the stop, while the hook fails
	n.Wait()
	fi, err := os.Stat(filepath.Join(spool, "42.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the event is not kept: %v %v", fi, err)
	}

	h2 := &fakeHooks{fails: map[string]int{}, call: make(chan struct{}, 16)}
	n2 := New(context.Background(), h2, clk, hclog.NewNullLogger(), spool)
	n2.Resume(Settings{Hooks: []string{"tg", "index"}})
	<-h2.call
	n2.Wait()
	if len(h2.calls) != 1 || h2.calls[0] != "index/42" {
		t.Fatalf("after the restart: calls %v", h2.calls)
	}
	if files, _ := filepath.Glob(filepath.Join(spool, "*")); len(files) != 0 {
		t.Fatalf("the spool keeps %v after the delivery", files)
	}
}
