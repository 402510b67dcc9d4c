// Package sdktest tests plugins in-process over a real gRPC connection: the
// same go-plugin serving code, server shims and host client as in
// production, minus the process boundary. Conformance runs the behaviour
// every channel plugin owes the host.
//
// Everything the plugin and go-plugin log goes to t.Log, so it shows with
// a failing test (or -v) and never on the terminal of a passing one.
package sdktest

import (
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/internal/wire"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
)

// StopTimeout bounds each step of the teardown at the end of a test: the
// channel's Run returning after its context was canceled, then go-plugin's
// server stopping. A plugin that overruns it fails the test with an error
// naming the step instead of hanging it.
const StopTimeout = 5 * time.Second

// Harness is a plugin served in-process and a host client connected to it.
type Harness struct {
	// Plugin is the host's client of the plugin under test.
	Plugin *pluginclient.Plugin
}

// Start serves p in-process and connects a host client to it. When t ends
// the plugin is stopped as the host stops it: the channel's Run context is
// canceled (Run must return within StopTimeout), then the connection and
// the server are closed.
func Start(t testing.TB, p sdk.Plugin) *Harness {
	t.Helper()
	h, stop := start(t, p, StopTimeout)
	t.Cleanup(stop)
	return h
}

// Configure configures the plugin with cfg as the host does (bounded by
// WaitDeadline) and returns h; an error or any diagnostic, a warning too,
// fails t:
//
//	h := sdktest.Start(t, plugin()).Configure(t, schema.Config{Instance: "x", JSON: []byte(`{}`)})
func (h *Harness) Configure(t testing.TB, cfg schema.Config) *Harness {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), WaitDeadline(t))
	defer cancel()
	if diags, err := h.Plugin.Configure(ctx, cfg); err != nil || len(diags) > 0 {
		t.Fatalf("configure: %v %v", diags, err)
	}
	return h
}

// start is Start with the teardown returned instead of registered, and its
// bound as a parameter (the tests of this package shorten it).
func start(t testing.TB, p sdk.Plugin, stopTimeout time.Duration) (*Harness, func()) {
	t.Helper()
	out := &testWriter{t: t}
	pluginLog := hclog.New(&hclog.LoggerOptions{Name: p.Name, Output: out, Level: hclog.Debug})
	goPluginLog := hclog.New(&hclog.LoggerOptions{Name: "go-plugin", Output: out, Level: hclog.Warn})

	runCtx, cancelRun := context.WithCancel(context.Background())
	inbox := wire.NewInbox()
	// Authenticated as a launched plugin is: every call carries the
	// secret, every Send's media paths their grants.
	secret := wire.NewSecret()
	srv := &wire.Server{Impl: implOf(p), Log: pluginLog, Ctx: runCtx, Inbox: inbox, Secret: secret}

	serving, err := wire.Serve(srv, goPluginLog)
	if err != nil {
		cancelRun()
		out.close()
		t.Fatalf("sdktest: plugin %s: serve: %v", p.Name, err)
	}
	// Attached as a host attaches to a plugin in debug mode. In-process,
	// the "process" go-plugin watches is the server.
	rc := &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: wire.ProtocolVersion, Addr: serving.Addr(), Pid: os.Getpid(), Test: true,
		ReattachFunc: func() (runner.AttachedRunner, error) { return served(serving.Done()), nil }}
	client := pluginclient.NewClient(pluginclient.Launch{Reattach: rc, Secret: secret, Logger: goPluginLog})
	stop := func() {
		defer out.close()
		cancelRun()
		inbox.Stop()
		if done := srv.RunDone(); done != nil {
			select {
			case <-done:
			case <-time.After(stopTimeout):
				t.Errorf("sdktest: plugin %s: the channel's Run did not return within %s of its context being canceled; Run must return when ctx is done (look for a blocking call that ignores ctx); the goroutines:\n%s", p.Name, stopTimeout, allStacks())
			}
		}
		if rpc, err := client.Client(); err == nil {
			_ = rpc.Close()
		}
		client.Kill()
		stopped := make(chan struct{})
		go func() {
			serving.Stop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(stopTimeout):
			t.Errorf("sdktest: plugin %s: the plugin's server did not stop within %s (a handler that ignores its context?)", p.Name, stopTimeout)
		}
	}
	rpc, err := client.Client()
	if err != nil {
		stop()
		t.Fatalf("sdktest: connect to plugin %s: %v", p.Name, err)
	}
	raw, err := rpc.Dispense(wire.PluginName)
	if err != nil {
		stop()
		t.Fatalf("sdktest: dispense: %v", err)
	}
	conn, ok := raw.(*grpc.ClientConn)
	if !ok {
		stop()
		t.Fatalf("sdktest: dispense returned %T", raw)
	}
	return &Harness{Plugin: pluginclient.Wrap(conn)}, stop
}

// served is the runner.AttachedRunner of an in-process server: it has
// exited when closed is closed; Kill leaves stopping it to the teardown.
type served <-chan struct{}

func (s served) Wait(ctx context.Context) error {
	select {
	case <-s:
	case <-ctx.Done():
	}
	return nil
}
func (s served) Kill(context.Context) error { return nil }
func (s served) ID() string                 { return "in-process" }
func (s served) PluginToHost(n, a string) (string, string, error) {
	return n, a, nil
}
func (s served) HostToPlugin(n, a string) (string, string, error) {
	return n, a, nil
}

// implOf converts an sdk.Plugin for the wire layer.
func implOf(p sdk.Plugin) *wire.Impl {
	return &wire.Impl{Name: p.Name, Version: p.Version, Setup: p.Setup, Schema: p.Schema, Validate: p.Validate, Configure: p.Configure, Channel: p.Channel, Command: p.Command, Hook: p.Hook,
		MessageReceived: p.MessageReceived, MessageSending: p.MessageSending, AgentEnd: p.AgentEnd, Tool: p.Tool, Retry: p.Retry, Probe: p.Probe}
}

// testWriter writes log lines to t.Log until the test's teardown closes
// it; later lines (from a goroutine the plugin left behind) are dropped, as
// t.Log after the end of a test panics.
type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

// Write implements io.Writer; hclog writes one line per call.
func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// allStacks is every goroutine's stack, for a failure that waits on one.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:runtime.Stack(buf, true)]
}
