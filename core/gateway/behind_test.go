package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

// behindPlacement runs every session here; an older message of the chat
// is on its way (Behind) until arrived is called.
type behindPlacement struct {
	mu      sync.Mutex
	waiting bool
}

func (p *behindPlacement) Place(context.Context, string) (string, bool, error) {
	return "me", true, nil
}
func (p *behindPlacement) Behind(context.Context, int64) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting, nil
}
func (p *behindPlacement) Handoff(context.Context, string, ...int64) error { return nil }
func (p *behindPlacement) Forget(string)                                   {}
func (p *behindPlacement) arrived() {
	p.mu.Lock()
	p.waiting = false
	p.mu.Unlock()
}

// TestNewerMessagesWaitingForAnOlderOneKeepTheirOrder: two new messages of
// a chat arrive while an older one is still on its way to this host (a
// failover). Both wait; once the older one is in, they run in their
// order — the second never overtakes the first because its check came
// round first. The clock is the fake: the second message's check falls due
// (t = 150 ms) before the first's (t = 200 ms) after the older one
// arrived (t = 120 ms), which is the order that once ran them [5 4].
func TestNewerMessagesWaitingForAnOlderOneKeepTheirOrder(t *testing.T) {
	clk := tstimetest.NewFake(time.Unix(1_800_000_000, 0))
	place := &behindPlacement{waiting: true}
	g, _, agent := inproc(t, nil, func(o *Options) { o.Clock, o.Placement = clk, place })
	ctx := context.Background()
	base := clk.Waiters()
	sendDM(t, ctx, g, "5", "four")
	if !clk.BlockUntil(base+1, 10*time.Second) {
		t.Fatal("the first message did not wait")
	}
	clk.Advance(50 * time.Millisecond)
	sendDM(t, ctx, g, "5", "five")
	// Before the fix the second message waits on its own timer; after it,
	// it joins the first one's wait. Either way nothing runs yet.
	clk.BlockUntil(base+2, time.Second)
	clk.Advance(50 * time.Millisecond) // t = 100 ms: the first's check, still behind
	if !clk.BlockUntil(base+1, 10*time.Second) {
		t.Fatal("the first message stopped waiting")
	}
	place.arrived() // t = 120 ms in effect: the older message is in
	clk.Advance(20 * time.Millisecond)
	for range 4 {
		clk.Advance(30 * time.Millisecond) // 150 ms, 180 ms, 210 ms, 240 ms
	}
	deadline := time.Now().Add(10 * time.Second) // a bound on a failing test, not a wait for time
	for {
		agent.mu.Lock()
		n := len(agent.prompts)
		agent.mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d turns ran after the older message arrived, want 2", n)
		}
		clk.Advance(10 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	first, second := agent.turn(t, 0).Prompt, agent.turn(t, 1).Prompt
	if !strings.Contains(first, "four") || strings.Contains(first, "five") || !strings.Contains(second, "five") {
		t.Fatalf("turns ran in the order %q, %q; want four, then five", first, second)
	}
}
