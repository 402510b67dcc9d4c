package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// With CLAWHOST_FAULT=attention-at-start the test binary serves a plugin
// that reports needs_attention from Configure, before the host could call
// it ready. init runs before TestMain; sdk.Serve's exit code ends the process.
func init() {
	if os.Getenv("CLAWHOST_FAULT") != "attention-at-start" {
		return
	}
	os.Exit(sdk.Serve(sdk.Plugin{
		Name:    "fault-attention",
		Channel: &faulty{},
		Configure: func(_ context.Context, cfg schema.Config) error {
			cfg.Status.Report(status.Status{State: status.NeedsAttention, Message: "scan the code",
				Attention: &status.Attention{Kind: status.Code, Data: "123-456"}})
			return nil
		},
	}))
}

// report makes a loopback plugin report st (its POST /status).
func report(t *testing.T, addrFile string, st map[string]any) {
	t.Helper()
	addr, err := os.ReadFile(addrFile)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(st)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Post("http://"+string(addr)+"/status", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /status: %s", resp.Status)
	}
}

// failNext makes the loopback plugin's next op ("send", "edit") fail
// with code.
func failNext(t *testing.T, addrFile, op string, code channel.Code) {
	t.Helper()
	addr, err := os.ReadFile(addrFile)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"op": op, "code": string(code), "count": 1})
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Post("http://"+string(addr)+"/fail", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST /fail: %s", resp.Status)
	}
}

// waitStatus waits until ok accepts the instance's status.
func waitStatus(t *testing.T, inst *Instance, what string, ok func(Status) bool) Status {
	t.Helper()
	var st Status
	sdktest.WaitFor(t, what, func() error {
		st = inst.Status()
		return sdktest.Saw(ok(st), "status %+v", st)
	})
	return st
}

// TestPluginReportedStates drives a running loopback plugin through every
// state it can report: needs_attention (with a QR and a retry), degraded
// and ready, then kills it while it needs attention.
func TestPluginReportedStates(t *testing.T) {
	rec := newRecorder()
	var readyCalls atomic.Int32
	// A short probe interval: the probe keeps running in every reported
	// state and must not take needs_attention for a hang.
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}), Inbound: rec.inbound,
		FirstBackoff: 20 * time.Millisecond, ProbeInterval: 20 * time.Millisecond, ProbeTimeout: 2 * time.Second,
		OnReady: func(*Instance) { readyCalls.Add(1) }})
	t.Cleanup(h.Stop)
	inst, addrFile, first := runLoopback(t, h)
	ports := h.Ports()

	// needs_attention with a QR code and a retry label.
	expires := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	msg := "scan the QR code with the phone: Settings → Linked devices"
	report(t, addrFile, map[string]any{"state": "needs_attention", "message": msg,
		"attention": map[string]any{"kind": "qr", "data": "2@abc,def==", "expires_at": expires, "retry": "Show a new QR code"}})
	st := waitState(t, inst, StateNeedsAttention)
	want := status.Attention{Kind: status.QR, Data: "2@abc,def==", ExpiresAt: expires, Retry: "Show a new QR code"}
	if st.Attention == nil || !st.Attention.ExpiresAt.Equal(want.ExpiresAt) || st.Attention.Kind != want.Kind || st.Attention.Data != want.Data || st.Attention.Retry != want.Retry {
		t.Fatalf("attention %+v, want %+v", st.Attention, want)
	}
	if st.Action != msg || st.Message != msg || st.PID != first.PID || st.Restarts != 0 {
		t.Fatalf("status %+v", st)
	}

	// Not ready: calls fail at once with a non-retryable error that says why.
	start := time.Now()
	_, err := ports.Send(context.Background(), "lo", channel.SendRequest{ChatID: "c1", Text: "hi"})
	if err == nil || channel.CodeOf(err).Retryable() || channel.CodeOf(err) == channel.CodeInternal || !strings.Contains(err.Error(), msg) {
		t.Fatalf("send to an instance that needs attention: %v (code %s)", err, channel.CodeOf(err))
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("send took %s to fail", d)
	}
	if _, ok := ports.Ready("lo"); ok {
		t.Fatal("Ready reports an instance that needs attention")
	}

	// Retry reaches the plugin, which rotates its QR code; the host shows
	// the new one.
	if err := h.Retry(context.Background(), "lo"); err != nil {
		t.Fatal(err)
	}
	st = waitStatus(t, inst, "rotated QR", func(s Status) bool { return s.Attention != nil && s.Attention.Data == "2@abc,def==#1" })
	if st.State != StateNeedsAttention || !st.Attention.ExpiresAt.After(expires.Add(-time.Second)) {
		t.Fatalf("after retry: %+v", st)
	}

	// Probed all along and never killed.
	// Ten liveness probes of the real plugin process (Describe RPCs at
	// the 20 ms ProbeInterval) go by: it must not be restarted for them.
	time.Sleep(200 * time.Millisecond) // on purpose: a restart would come now
	if st := inst.Status(); st.PID != first.PID || st.Restarts != 0 || st.State != StateNeedsAttention {
		t.Fatalf("needs_attention plugin was restarted or changed: %+v", st)
	}

	// degraded: up and retrying by itself; not restarted, calls wait.
	report(t, addrFile, map[string]any{"state": "degraded", "message": "cannot reach the platform: connection refused"})
	st = waitState(t, inst, StateDegraded)
	if !strings.Contains(st.LastError, "connection refused") || st.Attention != nil || st.Action != actionReportedDegraded || st.PID != first.PID {
		t.Fatalf("degraded status %+v", st)
	}
	if err := h.Retry(context.Background(), "lo"); !errors.Is(err, ErrNoRetry) {
		t.Fatalf("retry while degraded: %v", err)
	}
	readyBefore := readyCalls.Load()
	// Its process is up: a reply goes to it at once (a Telegram plugin
	// whose polls fail may still send; waiting held every reply for as
	// long as the polls failed, six ready waits of a minute, then lost it).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, err = ports.Send(ctx, "lo", channel.SendRequest{ChatID: "c1", Text: "through"})
	cancel()
	if err != nil {
		t.Fatalf("send to a degraded instance whose process is up: %v", err)
	}
	if _, ok := ports.Ready("lo"); !ok {
		t.Fatal("Ready does not report a degraded instance whose process is up")
	}
	// Once a send to it failed as the platform is unreachable, calls wait
	// for it to be ready again, as for a restart (delivery's bound on
	// that wait is unchanged).
	failNext(t, addrFile, "send", channel.CodeUnavailable)
	if _, err := ports.Send(context.Background(), "lo", channel.SendRequest{ChatID: "c1", Text: "fails"}); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Fatalf("the injected failure: %v", err)
	}
	sent := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := ports.Send(ctx, "lo", channel.SendRequest{ChatID: "c1", Text: "waited"})
		sent <- err
	}()
	select {
	case err := <-sent:
		t.Fatalf("send to a degraded instance whose last send failed did not wait: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	// ready again: the waiting send goes through, OnReady runs again.
	report(t, addrFile, map[string]any{"state": "ready"})
	if err := <-sent; err != nil {
		t.Fatalf("waiting send: %v", err)
	}
	st = waitState(t, inst, StateReady)
	if st.Message != "" || st.Attention != nil || st.Action != "" {
		t.Fatalf("ready status %+v", st)
	}
	waitStatus(t, inst, "OnReady called", func(Status) bool { return readyCalls.Load() > readyBefore })

	// Ready with a link (the page the plugin serves, e.g. the web chat's
	// with its token): shown while ready; another kind of attention is not.
	report(t, addrFile, map[string]any{"state": "ready", "attention": map[string]any{"kind": "link", "data": "http://127.0.0.1:1/?token=t"}})
	st = waitStatus(t, inst, "ready with its link", func(s Status) bool { return s.Attention != nil })
	if st.State != StateReady || st.Attention.Kind != status.Link || st.Attention.Data != "http://127.0.0.1:1/?token=t" || st.Action != "" {
		t.Fatalf("ready with a link: %+v", st)
	}
	report(t, addrFile, map[string]any{"state": "ready", "attention": map[string]any{"kind": "qr", "data": "2@x"}})
	st = waitStatus(t, inst, "ready without attention", func(s Status) bool { return s.Attention == nil })
	if st.State != StateReady {
		t.Fatalf("ready with a QR: %+v", st)
	}

	// needs_attention, then the process dies: crash handling applies, and
	// the new process starts without the old report.
	report(t, addrFile, map[string]any{"state": "needs_attention", "message": "link the device",
		"attention": map[string]any{"kind": "code", "data": "ABCD-EFGH"}})
	waitState(t, inst, StateNeedsAttention)
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st = waitStatus(t, inst, "restarted", func(s Status) bool { return s.State == StateReady && s.PID != first.PID })
	if st.Restarts != 1 || st.Attention != nil || st.Message != "" {
		t.Fatalf("after the crash: %+v", st)
	}
}

// TestReportedStartingIsNotAnError: a running plugin that reports
// starting (a step on the way to ready: WhatsApp logging in after a link)
// is shown starting with its message, logged at INFO and never at ERROR,
// not restarted, and holds calls until it reports ready.
func TestReportedStartingIsNotAnError(t *testing.T) {
	var log lockedLog
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &log}), Inbound: newRecorder().inbound})
	t.Cleanup(h.Stop)
	inst, addrFile, first := runLoopback(t, h)
	ports := h.Ports()

	msg := "Linked to +15550001; logging in."
	report(t, addrFile, map[string]any{"state": "starting", "message": msg})
	st := waitState(t, inst, StateStarting)
	if st.Message != msg || st.LastError != "" || st.PID != first.PID || st.Restarts != 0 {
		t.Fatalf("starting status %+v", st)
	}
	if _, ok := ports.Ready("lo"); ok {
		t.Fatal("Ready reports an instance that is still starting")
	}
	sent := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := ports.Send(ctx, "lo", channel.SendRequest{ChatID: "c1", Text: "after the login"})
		sent <- err
	}()
	report(t, addrFile, map[string]any{"state": "ready"})
	if err := <-sent; err != nil {
		t.Fatalf("a send held while starting: %v", err)
	}
	waitState(t, inst, StateReady)
	said := log.String()
	if strings.Contains(said, "[ERROR]") {
		t.Errorf("a step on the way to ready logged an error:\n%s", said)
	}
	if !strings.Contains(said, "[INFO]  lo: plugin is starting: message=\"Linked to +15550001; logging in.\"") {
		t.Errorf("the step is not logged at INFO with its message:\n%s", said)
	}
}

// lockedLog is a log output written from several goroutines.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestReportBeforeReady: a plugin that knows from the start that it needs
// attention is never shown ready (OnReady is not called) and its report
// is there at once.
func TestReportBeforeReady(t *testing.T) {
	var readyCalls atomic.Int32
	h := New(Options{Logger: hclog.NewNullLogger(), OnReady: func(*Instance) { readyCalls.Add(1) }})
	t.Cleanup(h.Stop)
	spec := faultSpec("att", "attention-at-start")
	spec.StartTimeout = 20 * time.Second // the test binary starts slowly under -race
	h.Apply([]Spec{spec})
	inst := h.Instance("att")
	st := waitStatus(t, inst, "needs_attention", func(st Status) bool {
		if st.State != StateStarting && st.State != StateNeedsAttention {
			t.Fatalf("state %s (last error %q) before needs_attention", st.State, st.LastError)
		}
		return st.State == StateNeedsAttention
	})
	if st.Action != "scan the code" || st.Attention == nil || st.Attention.Kind != status.Code || st.Attention.Data != "123-456" {
		t.Fatalf("status %+v", st)
	}
	if n := readyCalls.Load(); n != 0 {
		t.Fatalf("OnReady called %d times for a plugin that needs attention", n)
	}
	if err := h.Retry(context.Background(), "att"); !errors.Is(err, ErrNoRetry) {
		t.Fatalf("retry without a retry label: %v", err)
	}
	if err := h.Retry(context.Background(), "nope"); !errors.Is(err, ErrUnknownInstance) {
		t.Fatalf("retry of an unknown instance: %v", err)
	}
}

// TestStateOf maps every report to its state.
func TestStateOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   status.State
		want State
	}{
		{status.Ready, StateReady},
		{"", StateReady},
		{status.NeedsAttention, StateNeedsAttention},
		{status.Degraded, StateDegraded},
		{status.Starting, StateStarting},
		{"something new", StateDegraded},
	} {
		if got := stateOf(status.Status{State: tc.in}); got != tc.want {
			t.Errorf("stateOf(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// statusServer is the PluginService of a plugin over in-process gRPC:
// WatchStatus runs the script of its n-th call; nil script means the
// plugin predates WatchStatus (the embedded Unimplemented answers).
type statusServer struct {
	pb.UnimplementedPluginServiceServer
	mu     sync.Mutex
	calls  int
	script func(call int, stream grpc.ServerStreamingServer[pb.PluginStatus]) error
}

func (s *statusServer) WatchStatus(req *pb.WatchStatusRequest, stream grpc.ServerStreamingServer[pb.PluginStatus]) error {
	if s.script == nil {
		return s.UnimplementedPluginServiceServer.WatchStatus(req, stream)
	}
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	return s.script(n, stream)
}

// watchInProcess runs watchStatus and serving for an instance whose plugin
// is srv, as runOnce does, and returns the instance.
func watchInProcess(t *testing.T, srv *statusServer) *Instance {
	t.Helper()
	conn := serveLoopback(t, func(gs *grpc.Server) { pb.RegisterPluginServiceServer(gs, srv) })
	h := New(Options{Logger: hclog.NewNullLogger()})
	inst := newInstance(h, Spec{Instance: "fake"})
	t.Cleanup(inst.cancel)
	inst.watchStatus(inst.ctx, pluginclient.Wrap(conn))
	inst.serving()
	return inst
}

// TestPluginWithoutWatchStatus: a plugin built before WatchStatus existed
// answers Unimplemented; it is ready at once, without waiting for a first
// report.
func TestPluginWithoutWatchStatus(t *testing.T) {
	t.Parallel()
	start := time.Now()
	inst := watchInProcess(t, &statusServer{})
	if took := time.Since(start); took >= firstReportWait {
		t.Errorf("waited %s for a report that never comes", took)
	}
	if st := inst.Status(); st.State != StateReady || st.Message != "" {
		t.Fatalf("status %+v", st)
	}
}

// TestStatusStreamReopened: the stream breaks while the plugin runs; it is
// opened again and the next report applies. An unknown state is not ready.
func TestStatusStreamReopened(t *testing.T) {
	t.Parallel()
	srv := &statusServer{script: func(call int, stream grpc.ServerStreamingServer[pb.PluginStatus]) error {
		switch call {
		case 1:
			if err := stream.Send(&pb.PluginStatus{State: "ready"}); err != nil {
				return err
			}
			return grpcstatus.Error(codes.Internal, "the stream broke")
		case 2:
			if err := stream.Send(&pb.PluginStatus{State: "needs_attention", Message: "type the code",
				Attention: &pb.Attention{Kind: "code", Data: "1234"}}); err != nil {
				return err
			}
			if err := stream.Send(&pb.PluginStatus{State: "hibernating", Message: "zzz"}); err != nil {
				return err
			}
		}
		<-stream.Context().Done()
		return nil
	}}
	inst := watchInProcess(t, srv)
	st := waitStatus(t, inst, "the unknown state after the reopened stream", func(s Status) bool { return s.State == StateDegraded })
	if !strings.Contains(st.LastError, `"hibernating"`) || !strings.Contains(st.LastError, "zzz") {
		t.Fatalf("status %+v", st)
	}
	srv.mu.Lock()
	calls := srv.calls
	srv.mu.Unlock()
	if calls != 2 {
		t.Fatalf("WatchStatus called %d times, want 2", calls)
	}
}
