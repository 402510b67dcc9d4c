package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/turn"
)

// What the queue modes do is core/queue's (tested there) and how the
// composed pipeline shows them to claude is TestInProcessQueueModesReachThePrompt.
// They run in process (lo): /stop's first turn is held by the scripted
// agent and the test waits for it to start before the next messages; the
// debounce window is the fake clock's, advanced once the arrivals are in
// it.

func TestStopAbortsAndClearsQueue(t *testing.T) {
	e := newLo(t, loOptions{})
	hold, _ := e.hold() // never released: /stop ends it
	e.post(dm("u1", "long "+hold))
	e.running()
	e.post(dm("u1", "queued")) // stored before post returns
	e.post(dm("u1", "/stop"))
	contains(t, e.text("chat-u1"), "Stopped.", "1 queued message(s) dropped")
	e.post(dm("u1", "after"))
	got := e.text("chat-u1")
	contains(t, got, "after", turn.AbortHint)
	if strings.Contains(got, "queued") || strings.Contains(got, "long") {
		t.Errorf("stopped and dropped messages must not be answered: %q", got)
	}
}

func TestDebounceMergesAndCommandsBypass(t *testing.T) {
	d := 300 * time.Millisecond
	clk := tstimetest.NewFake(time.Now())
	e := newLo(t, loOptions{clock: clk, settings: func(s *Settings) { s.Debounce = debounce.Settings{Global: &d} }})
	e.post(dm("u1", "part one"))
	e.post(dm("u1", "part two"))
	e.gw.arrivals.Wait() // both are in the window
	clk.Advance(d)
	got := e.text("chat-u1")
	contains(t, got, "part one", "part two")
	e.post(dm("u1", "pending"))
	e.post(dm("u1", "/whoami"))
	e.gw.arrivals.Wait()
	clk.Advance(d) // the pending text's window, had the command not flushed it
	// The pending text is flushed first, then the command bypasses.
	first, second := e.text("chat-u1"), e.text("chat-u1")
	if !strings.Contains(first+second, "pending") || !strings.Contains(first+second, "You are lo:u1") {
		t.Errorf("got %q then %q", first, second)
	}
	s, _ := e.db.Session(context.Background(), "agent:main:lo:direct:u1")
	if s.Turns != 2 {
		t.Errorf("turns = %d, want 2 (debounced messages share a turn)", s.Turns)
	}
}
