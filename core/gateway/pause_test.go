package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/schedule"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestInProcessScheduleHeldByThePause: a real scheduler on the fake clock
// whose one-shot schedule comes due while claude's usage limit pauses the
// turns: each try is refused (nothing reaches claude), and after the
// reset the held run fires once and is answered once, after the parked
// message.
func TestInProcessScheduleHeldByThePause(t *testing.T) {
	clk := tstimetest.NewFake(time.Now())
	g, ports, agent := inproc(t, nil, func(o *Options) { o.Clock = clk })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reset := clk.Now().Add(time.Hour)
	agent.mu.Lock()
	agent.limit = &runner.Error{Kind: runner.KindUsageLimit, ResetAt: reset, Notice: "limit"}
	agent.mu.Unlock()
	sendDM(t, ctx, g, "5", "a1")
	seen := 0
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "usage limit is reached") {
		t.Fatalf("chat 5 was told %q", got)
	}

	var mu sync.Mutex
	var refused, fired, trying int
	tried := make(chan struct{}, 64)
	sch := schedule.New(schedule.Options{
		Jobs:  []schedule.Job{{Name: "daily", At: clk.Now().Add(10 * time.Minute), Target: "tg:5", Prompt: "daily report"}},
		Clock: clk,
		Fire: func(ctx context.Context, r schedule.Run) error {
			mu.Lock()
			trying++
			mu.Unlock()
			defer func() {
				mu.Lock()
				trying--
				mu.Unlock()
			}()
			err := g.Scheduled(ctx, ScheduledRun{Job: r.Job, At: r.At, Chat: r.Target, Prompt: r.Prompt})
			mu.Lock()
			if err != nil {
				refused++
			} else {
				fired++
			}
			mu.Unlock()
			tried <- struct{}{}
			return err
		},
	})
	waiters := clk.Waiters()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sch.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	// Due during the pause: refused, and tried again a minute later.
	for range 2 {
		if !clk.BlockUntil(waiters+1, 5*time.Second) {
			t.Fatal("the scheduler is not waiting")
		}
		clk.Advance(10 * time.Minute)
		select {
		case <-tried:
		case <-time.After(10 * time.Second): // a bound on a failing test
			t.Fatal("the schedule was not tried")
		}
	}
	mu.Lock()
	if refused < 2 || fired != 0 {
		t.Errorf("during the pause: %d tries refused, %d fired; want 2 or more, 0", refused, fired)
	}
	mu.Unlock()
	agent.mu.Lock()
	agent.limit = nil
	if len(agent.prompts) != 1 {
		t.Errorf("prompts during the pause %q, want only a1's", agent.prompts)
	}
	agent.mu.Unlock()

	// The reset: the parked message first, then the held run, once.
	clk.Set(reset)
	if got := ports.next(t, "5", &seen); !strings.HasSuffix(got, ": a1") {
		t.Fatalf("after the reset %q, want a1's answer", got)
	}
	// Tries due before the reset may run as the clock passes them (refused
	// until the pause ended): the next one a minute on fires.
	idle := func() bool { // fired, or waiting to try again
		deadline := time.Now().Add(10 * time.Second) // a bound on a failing test
		for time.Now().Before(deadline) {
			mu.Lock()
			f, busy := fired, trying
			mu.Unlock()
			if f > 0 {
				return true
			}
			if busy == 0 && clk.BlockUntil(1, 100*time.Millisecond) {
				return false
			}
		}
		t.Fatal("the scheduler neither fired nor waits to try again")
		return false
	}
	for range 10 {
		if idle() {
			break
		}
		clk.Advance(schedule.DefaultRetryAfter)
	}
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "daily report") {
		t.Fatalf("%q, want the schedule's answer", got)
	}
	clk.Advance(time.Hour) // no further try comes
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	g.Close(cctx)
	mu.Lock()
	defer mu.Unlock()
	if fired != 1 {
		t.Errorf("the held run fired %d times, want once", fired)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	n := 0
	for _, p := range agent.prompts {
		n += strings.Count(p, "daily report")
	}
	if n != 1 || len(agent.prompts) != 3 {
		t.Errorf("prompts %q: want a1 (refused), a1, the schedule once", agent.prompts)
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if c := countSent(ports.sent, "daily report"); c != 1 {
		t.Errorf("the schedule's answer was sent %d times", c)
	}
}

func countSent(sent []channel.SendRequest, sub string) int {
	n := 0
	for _, r := range sent {
		if strings.Contains(r.Text, sub) {
			n++
		}
	}
	return n
}

// TestInProcessScheduleIsToldOnce: a schedule that ran in a chat is a
// "System:" line of the chat's next ordinary turn, once; a heartbeat is
// not.
func TestInProcessScheduleIsToldOnce(t *testing.T) {
	g, ports, agent := inproc(t, nil)
	ctx := context.Background()
	seen := 0
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.Local)
	for _, job := range []string{turn.HeartbeatJob, "daily"} {
		if err := g.Scheduled(ctx, ScheduledRun{Job: job, At: at, Chat: "tg:5", Prompt: job + " prompt"}); err != nil {
			t.Fatal(err)
		}
		ports.next(t, "5", &seen) // the scripted agent answers a heartbeat too
	}
	for _, text := range []string{"hello", "again"} {
		sendDM(t, ctx, g, "5", text)
		ports.next(t, "5", &seen)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.prompts) != 4 {
		t.Fatalf("prompts %q, want the heartbeat's, the schedule's and two", agent.prompts)
	}
	line := `System: The schedule "daily" ran at 09:00`
	for i, want := range []int{0, 0, 1, 0} {
		if n := strings.Count(agent.prompts[i], line); n != want {
			t.Errorf("prompt %d has %q %d times, want %d:\n%s", i+1, line, n, want, agent.prompts[i])
		}
	}
	for i, p := range agent.prompts[1:] {
		if strings.Contains(p, `"heartbeat" ran`) {
			t.Errorf("prompt %d tells of the heartbeat:\n%s", i+2, p)
		}
	}
}
