package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
)

// releaseGate is the store with a gate on one read of a session's queue:
// once armed, the first ListPending of chat that finds an entry says so
// (picked) and returns only when released — the lane holds what it read
// while the test ends the pause. PendingCounts, which the pause's end
// calls once the parked entries are back in their queues and the pause
// is lifted, says so (resumed).
type releaseGate struct {
	store.Store
	chat string

	mu      sync.Mutex
	armed   bool
	picked  chan struct{}
	release chan struct{}
	resumed chan struct{}
}

func (s *releaseGate) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *releaseGate) ListPending(ctx context.Context, key string, limit int) ([]store.Entry, error) {
	es, err := s.Store.ListPending(ctx, key, limit)
	s.mu.Lock()
	hold := s.armed && len(es) > 0 && es[0].ChatID == s.chat
	if hold {
		s.armed = false
	}
	s.mu.Unlock()
	if hold {
		close(s.picked)
		<-s.release
	}
	return es, err
}

func (s *releaseGate) PendingCounts(ctx context.Context) (map[string]int, error) {
	counts, err := s.Store.PendingCounts(ctx)
	select {
	case <-s.resumed:
	default:
		close(s.resumed)
	}
	return counts, err
}

// TestInProcessUsageLimitReleaseOrder: a chat's newer message that its
// lane picked from the queue while the older one was parked does not run
// ahead of it when the pause ends between the pick and the turn's start
// (issue 56: TestInProcessUsageLimit answered a2 before a1 about once in
// ten runs). a2 waits behind a1's held turn; a1 then hits the limit and
// parks, and the lane reads its queue again: the gate holds that read —
// it found a2 alone — while the fake clock ends the pause; a2's turn then
// starts with the pause lifted: a1 must be answered first.
func TestInProcessUsageLimitReleaseOrder(t *testing.T) {
	clk := tstimetest.NewFake(time.Now())
	gate := &releaseGate{chat: "5", picked: make(chan struct{}), release: make(chan struct{}), resumed: make(chan struct{})}
	g, ports, agent := inproc(t, func(s *Settings) { s.SeenReaction = "👀" }, func(o *Options) {
		o.Clock = clk
		gate.Store = o.Store
		o.Store = gate
	})
	ports.react = true
	ctx := context.Background()
	agent.mu.Lock()
	agent.limit = &runner.Error{Kind: runner.KindUsageLimit, ResetAt: clk.Now().Add(time.Hour), Notice: "limit"}
	agent.mu.Unlock()
	send := func(text string) {
		t.Helper()
		sendDM(t, ctx, g, "5", text)
	}
	bound := func(c <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second): // a bound on a failing test
			t.Fatal(what)
		}
	}
	send("a1 hold")
	bound(agent.held, "a1's turn did not start")
	send("a2")
	for queued := false; !queued; { // a2 waits behind a1 (its seen reaction)
		ports.mu.Lock()
		queued = len(ports.reacted) > 0
		ports.mu.Unlock()
		if !queued {
			bound(ports.more, "a2 was not queued")
		}
	}
	gate.arm()
	close(agent.release)
	seen := 0
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "usage limit is reached") {
		t.Fatalf("chat 5 was told %q", got)
	}
	agent.mu.Lock()
	agent.limit = nil
	agent.mu.Unlock()
	bound(gate.picked, "the lane never read a2 from the queue")
	clk.Advance(time.Hour)
	bound(gate.resumed, "the pause did not end")
	close(gate.release)
	for _, w := range []string{"a1 hold", "a2"} {
		if got := ports.next(t, "5", &seen); !strings.HasPrefix(got, "re: ") || !strings.HasSuffix(got, ": "+w) {
			t.Fatalf("chat 5: %q, want the answer to %q", got, w)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g.Close(cctx)
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.prompts) != 3 {
		t.Errorf("%d turns reached claude, want 3 (a1 at the limit, a1, a2)", len(agent.prompts))
	}
}
