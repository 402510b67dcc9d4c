package health

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config/configtest"
	"github.com/clawhost/clawhost/core/doctor"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestAgentHealth: a missing command makes the agent not ready with what
// to do; a turn refused for credentials makes it not logged in until a
// turn gets through; a version other than the tested one is a note, not a
// failure.
func TestAgentHealth(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	missing := &Agent{missing: "agent main: /opt/none/claude not found (no such file or directory)"}
	if v := missing.View(); v.Ready || v.State != "missing" || v.Action == "" {
		t.Errorf("missing: %+v", v)
	}
	a := &Agent{path: "/usr/bin/claude", version: doctor.TestedClaudeVersion}
	if v := a.View(); !v.Ready || v.State != "ready" || v.Action != "" {
		t.Errorf("ready: %+v", v)
	}
	a.Turn("auth", now)
	if v := a.View(); v.Ready || v.State != "not_logged_in" || !v.Since.Equal(now) {
		t.Errorf("after an auth failure: %+v", v)
	}
	a.Turn("timeout", now.Add(time.Minute)) // says nothing about the login
	if v := a.View(); v.Ready {
		t.Errorf("a timeout cleared it: %+v", v)
	}
	a.Turn("ok", now.Add(2*time.Minute))
	if v := a.View(); !v.Ready {
		t.Errorf("after a turn got through: %+v", v)
	}
	a.version = "2.2.0"
	if v := a.View(); !v.Ready || v.Action == "" {
		t.Errorf("another version: %+v", v)
	}
}

// failingStore fails its writes while fail is set.
type failingStore struct {
	store.Store
	fail error
	// syncFail is the error of an early accept's fsync.
	syncFail error
}

func (f *failingStore) Accept(context.Context, store.Inbound) (store.AcceptResult, error) {
	return store.AcceptResult{ID: 1}, f.fail
}

// AcceptEarly commits as Accept does; its fsync fails with syncFail.
func (f *failingStore) AcceptEarly(ctx context.Context, in store.Inbound) (store.AcceptResult, func() error, error) {
	res, err := f.Accept(ctx, in)
	return res, func() error { return f.syncFail }, err
}

func (f *failingStore) Finish(context.Context, store.FinishRequest) error { return f.fail }

func (f *failingStore) UpdateSession(_ context.Context, _ string, fn func(*store.Session, bool) error) (store.Session, error) {
	if f.fail != nil {
		return store.Session{}, f.fail
	}
	var s store.Session
	return s, fn(&s, false)
}

// TestStoreHealth: a failed write (a full disk) degrades the store and is
// counted per operation; the state machine's refusals, a shutdown and an
// error of UpdateSession's own function do not; the next write that works
// ends it.
func TestStoreHealth(t *testing.T) {
	t.Parallel()
	counted := map[string]int{}
	h := &Store{count: func(op string) { counted[op]++ }}
	f := &failingStore{}
	s := recording{f, h}
	ctx := context.Background()
	for _, err := range []error{store.ErrBadTransition, context.Canceled, fmt.Errorf("finish: %w", store.ErrClosed)} {
		f.fail = err
		_ = s.Finish(ctx, store.FinishRequest{})
	}
	f.fail = nil
	_, _ = s.UpdateSession(ctx, "k", func(*store.Session, bool) error { return errors.New("the caller's own") })
	if v := h.View(); v.State != "ok" || v.Errors != 0 {
		t.Fatalf("not storage failures: %+v", v)
	}
	f.fail = errors.New("disk I/O error: database or disk is full")
	_, _ = s.Accept(ctx, store.Inbound{})
	_ = s.Finish(ctx, store.FinishRequest{})
	v := h.View()
	if v.State != "degraded" || v.Errors != 2 || v.LastError != "finish: disk I/O error: database or disk is full" || v.Action == "" || counted["accept"] != 1 || counted["finish"] != 1 {
		t.Fatalf("degraded: %+v %v", v, counted)
	}
	f.fail = nil
	_, _ = s.Accept(ctx, store.Inbound{})
	if v := h.View(); v.State != "ok" || v.Errors != 2 {
		t.Errorf("after a write that worked: %+v", v)
	}
	// An accept committed early counts when its fsync fails.
	f.syncFail = errors.New("fsync: input/output error")
	_, synced, err := s.AcceptEarly(ctx, store.Inbound{})
	if err != nil {
		t.Fatal(err)
	}
	if v := h.View(); v.State != "ok" {
		t.Fatalf("before the fsync: %+v", v)
	}
	if err := synced(); err == nil {
		t.Fatal("synced hid the fsync's error")
	}
	if v := h.View(); v.State != "degraded" || v.LastError != "accept: fsync: input/output error" || counted["accept"] != 2 {
		t.Errorf("after a failed fsync: %+v %v", v, counted)
	}
}

// TestAgentHealthProbeStops: the start's background probe of the claude
// CLI (claude auth status, which writes claude's config directory) ends
// with the host: stop kills it and waits, so nothing of it outlives
// Shutdown.
func TestAgentHealthProbeStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	claude := filepath.Join(dir, "claude")
	sdktest.WriteExecutable(t, claude, []byte("#!/bin/sh\necho $$ > "+started+"\nexec sleep 60\n"), 0o755)
	cfg := configtest.Load(t, "agent {\n  command = \""+claude+"\"\n}\n")
	a := NewAgent(cfg, runner.Config{Command: claude, Workspace: dir}, nil)
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(started); err == nil && len(b) > 1 {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the probe never started")
		}
	}
	a.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the probe (pid %d) outlived stop", pid)
	}
}

// TestAgentHealthSaysNotLoggedIn: when the start's probe hears from
// claude auth status that claude is not logged in, the log says so (with
// what to do) as well as the status page; a logged-in claude logs nothing.
func TestAgentHealthSaysNotLoggedIn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		loggedIn bool
	}{{"not logged in", false}, {"logged in", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			claude := filepath.Join(dir, "claude")
			sdktest.WriteExecutable(t, claude, []byte(fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo '2.1.330 (Claude Code)' ;;\nauth) echo '{\"loggedIn\": %v, \"authMethod\": \"api_key\"}' ;;\nesac\n", c.loggedIn)), 0o755)
			cfg := configtest.Load(t, "agent {\n  command = \""+claude+"\"\n}\n")
			var log strings.Builder
			var mu sync.Mutex
			logger := hclog.New(&hclog.LoggerOptions{Output: lockedWriter{&mu, &log}})
			a := NewAgent(cfg, runner.Config{Command: claude, Workspace: dir}, logger)
			t.Cleanup(a.Stop)
			sdktest.WaitFor(t, "the probe's answer", func() bool {
				v := a.View()
				return v.State == "not_logged_in" || v.Auth != ""
			})
			mu.Lock()
			said := log.String()
			mu.Unlock()
			if warned := strings.Contains(said, "claude says it is not logged in: every turn fails until it is; log claude in"); warned == c.loggedIn {
				t.Errorf("logged %q", said)
			}
		})
	}
}

// lockedWriter is w behind mu (the probe logs from its goroutine).
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
