//go:build linux

package sandbox

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

// TestExpiredIdle: the keys whose last start is the release's period or more ago, and the
// wait until the next one's.
func TestExpiredIdle(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	d := 5 * time.Minute
	a, b, c, e := zygoteKey{agent: "a", uid: -1}, zygoteKey{agent: "b", uid: -1}, zygoteKey{agent: "c", uid: 1000}, zygoteKey{agent: "e", uid: -1}
	z := &zygote{}
	idle := map[zygoteKey][]*zygote{a: {z}, b: {z, z}, c: {z}, e: {}}
	last := map[zygoteKey]time.Time{a: now.Add(-d), b: now.Add(-2 * time.Minute), c: now.Add(-4 * time.Minute), e: now.Add(-time.Hour)}
	expired, next := expiredIdle(idle, last, now, d)
	if !slices.Equal(expired, []zygoteKey{a}) || next != time.Minute {
		t.Fatalf("expired %v, next in %v; want [a] and 1m (c's)", expired, next)
	}
	// A key that never started (its sandbox made by no start of its own) is expired.
	delete(last, b)
	if expired, _ = expiredIdle(idle, last, now, d); !slices.Equal(expired, []zygoteKey{a, b}) {
		t.Fatalf("expired %v, want [a b]", expired)
	}
	if expired, next = expiredIdle(map[zygoteKey][]*zygote{}, last, now, d); len(expired) != 0 || next != 0 {
		t.Fatalf("nothing idle: expired %v, next %v", expired, next)
	}
}

// TestPoolStopsIdleSandboxes: an agent's idle sandbox (a real helper in bubblewrap) stays
// while the agent started a claude within the release's period, and is stopped — its
// helper's process gone, the timer with it — once the agent started none for a whole
// period.
func TestPoolStopsIdleSandboxes(t *testing.T) {
	bwrap := needZygote(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	clk := tstimetest.NewFake(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
	zp := NewPool(bwrap, exe, hclog.NewNullLogger(), 0)
	zp.clock = clk
	t.Cleanup(zp.Close)
	k := zygoteKeyOf("main", nil)
	zp.mu.Lock()
	zp.startedNow(k) // the start that left the sandbox below
	zp.mu.Unlock()
	zp.refill(k, nil) // a real helper, idle
	if n, _ := zp.Idle("main", nil); n != 1 {
		t.Fatalf("%d idle sandboxes after a refill, want 1", n)
	}
	zp.mu.Lock()
	z := zp.idle[k][0]
	zp.mu.Unlock()
	if !clk.BlockUntil(1, zygoteTimeout) {
		t.Fatal("no release timer armed with a sandbox idle")
	}
	// A start four minutes in: at the period's end the sandbox stays, and the timer
	// waits for the rest of the new period.
	clk.Advance(4 * time.Minute)
	zp.mu.Lock()
	zp.startedNow(k)
	zp.mu.Unlock()
	clk.Advance(time.Minute)
	if !clk.BlockUntil(1, zygoteTimeout) {
		t.Fatal("the release timer was not armed again for the agent's new period")
	}
	if n, _ := zp.Idle("main", nil); n != 1 || !z.alive() {
		t.Fatalf("%d idle sandboxes (alive %v) one minute after a start, want 1", n, z.alive())
	}
	// A whole period without a start: stopped.
	clk.Advance(4 * time.Minute)
	select {
	case <-z.exited:
	case <-time.After(zygoteTimeout):
		t.Fatal("the idle sandbox's helper did not stop after a period without a start")
	}
	if n, _ := zp.Idle("main", nil); n != 0 {
		t.Fatalf("%d idle sandboxes after the release, want 0", n)
	}
	if w := clk.Waiters(); w != 0 {
		t.Fatalf("%d timers armed with no sandbox idle, want 0", w)
	}
}
