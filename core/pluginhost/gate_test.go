package pluginhost

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// testGate is a Gate the test opens and takes back.
type testGate struct {
	mu       sync.Mutex
	open     chan struct{}
	cancel   context.CancelFunc
	holds    int
	releases int
}

func newTestGate() *testGate { return &testGate{open: make(chan struct{})} }

func (g *testGate) Hold(ctx context.Context, instance string, waiting func(string)) (context.Context, func(), error) {
	g.mu.Lock()
	g.holds++
	open := g.open
	g.mu.Unlock()
	waiting("held by h2 (test)")
	select {
	case <-open:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	held, cancel := context.WithCancel(ctx)
	g.mu.Lock()
	g.cancel = cancel
	g.mu.Unlock()
	return held, func() {
		cancel()
		g.mu.Lock()
		g.releases++
		g.mu.Unlock()
	}, nil
}

// grant lets the waiting (and next) Hold through; take ends the current
// hold and closes the gate again.
func (g *testGate) grant() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
}

func (g *testGate) take() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = make(chan struct{})
	g.cancel()
}

func (g *testGate) counts() (holds, releases int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holds, g.releases
}

// TestGateKeepsAChannelInStandby: with a gate, a channel instance is
// started but not configured (the loopback channel does not listen) and
// waits in standby, saying why; once granted it is configured and ready;
// when the hold is lost it stops (its process too) and waits in standby
// again, without a crash's backoff or restart count; the hold is given
// back each time.
func TestGateKeepsAChannelInStandby(t *testing.T) {
	rec := newRecorder()
	g := newTestGate()
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}), Inbound: rec.inbound,
		FirstBackoff: 20 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, Gate: g})
	t.Cleanup(h.Stop)
	spec, addrFile := loopbackSpec(t, "lo")
	h.Apply([]Spec{spec})
	inst := h.Instance("lo")
	st := waitState(t, inst, StateStandby)
	if st.Message != "held by h2 (test)" || st.Action != standbyAction+" (held by h2 (test))" || st.PID == 0 {
		t.Fatalf("standby status %+v", st)
	}
	// Standby is said from inside Hold, which the supervisor waits in
	// before it configures the plugin: nothing to wait for.
	if _, err := os.Stat(addrFile); !os.IsNotExist(err) {
		t.Fatalf("the channel was configured in standby (its address file: %v)", err)
	}
	if _, ok := (Ports{h}).Ready("lo"); ok {
		t.Fatal("a standby channel reported ready")
	}

	g.grant()
	waitState(t, inst, StateReady)
	if err := post(addrFile, "hello"); err != nil {
		t.Fatal(err)
	}
	pid := inst.Status().PID

	os.Remove(addrFile)
	g.take()
	waitState(t, inst, StateStandby)
	// The plugin restarts, then asks the gate again.
	st = waitStatus(t, inst, "held by h2", func(s Status) bool { return s.Message == "held by h2 (test)" })
	if st.State != StateStandby || st.Message != "held by h2 (test)" || st.Restarts != 0 {
		t.Fatalf("after the hold was lost: %+v", st)
	}
	if st.PID == pid {
		t.Fatal("the plugin process that served the lost channel still runs")
	}
	if holds, releases := g.counts(); holds != 2 || releases != 1 {
		t.Fatalf("holds %d, releases %d; want 2 and 1", holds, releases)
	}
	h.Stop()
	if _, releases := g.counts(); releases != 1 {
		t.Fatalf("releases %d after stop; the second hold was never granted", releases)
	}
}

// TestGateSkipsNonChannels: a plugin without a channel never waits for
// the gate.
func TestGateSkipsNonChannels(t *testing.T) {
	g := newTestGate()
	h := New(Options{Logger: hclog.NewNullLogger(), Gate: g})
	t.Cleanup(h.Stop)
	h.Apply([]Spec{{Instance: "clock", Source: "clock", Path: binDir(t) + "/clawhost-clock-hook", Fingerprint: "1"}})
	waitState(t, h.Instance("clock"), StateReady)
	if holds, _ := g.counts(); holds != 0 {
		t.Fatalf("a hook plugin asked the gate %d times", holds)
	}
}
