package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/turn"
)

// The queue tests hold the first turn with the fake claude's #wait (until
// release) and wait for its typing indicator (the turn runs) before the
// next messages: no wait for time.

func TestQueueFollowupOneTurnEach(t *testing.T) {
	e := newEnv(t, envOptions{})
	hold, release := e.hold()
	e.post(dm("u1", "first "+hold))
	e.running("chat-u1")
	e.post(dm("u1", "second"))
	e.post(dm("u1", "third"))
	release()
	contains(t, e.text("chat-u1"), "first")
	contains(t, e.text("chat-u1"), "second")
	contains(t, e.text("chat-u1"), "third")
}

func TestQueueCollect(t *testing.T) {
	e := newEnv(t, envOptions{settings: func(s *Settings) { s.Queue.Mode = queue.Collect }})
	hold, release := e.hold()
	e.post(dm("u1", "first "+hold))
	e.running("chat-u1")
	e.post(dm("u1", "second"))
	e.post(dm("u1", "third"))
	release()
	contains(t, e.text("chat-u1"), "first")
	got := e.text("chat-u1")
	contains(t, got, "[Queued messages while agent was busy]", "Queued #1", "second", "Queued #2", "third")
	e.quiet("chat-u1", 500*time.Millisecond)
}

func TestQueueInterrupt(t *testing.T) {
	e := newEnv(t, envOptions{settings: func(s *Settings) { s.Queue.Mode = queue.Interrupt }})
	hold, _ := e.hold() // never released: the interrupt ends it
	e.post(dm("u1", "slow "+hold))
	e.running("chat-u1")
	e.post(dm("u1", "newer"))
	got := e.text("chat-u1")
	contains(t, got, "newer", turn.AbortHint)
	if strings.Contains(got, "slow") {
		t.Errorf("the interrupted message must not be answered: %q", got)
	}
}

func TestQueueCapDropsOldWithSummary(t *testing.T) {
	e := newEnv(t, envOptions{settings: func(s *Settings) { s.Queue.Cap = 2 }})
	hold, release := e.hold()
	e.post(dm("u1", "busy "+hold))
	e.running("chat-u1")
	for _, w := range []string{"m1", "m2", "m3", "m4"} {
		e.post(dm("u1", w))
	}
	release()
	contains(t, e.text("chat-u1"), "busy")
	got := e.text("chat-u1")
	contains(t, got, "[Messages dropped while the queue was full", "m1", "m2", "m3")
	contains(t, e.text("chat-u1"), "m4")
}

func TestStopAbortsAndClearsQueue(t *testing.T) {
	e := newEnv(t, envOptions{})
	hold, _ := e.hold() // never released: /stop ends it
	e.post(dm("u1", "long "+hold))
	e.running("chat-u1")
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
	e := newEnv(t, envOptions{settings: func(s *Settings) { s.Debounce = debounce.Settings{Global: &d} }})
	e.post(dm("u1", "part one"))
	e.post(dm("u1", "part two"))
	got := e.text("chat-u1")
	contains(t, got, "part one", "part two")
	e.post(dm("u1", "pending"))
	e.post(dm("u1", "/whoami"))
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
