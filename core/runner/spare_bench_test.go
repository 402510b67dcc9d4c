package runner

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkNewSessionSpare (issue 84, goal 2): with the real CLI against the fake API and
// agent.spare on, a new chat's first answer (Run → claude's first text) on the agent's
// spare beside a warm turn's, interleaved in each iteration, with a returning chat whose
// process was stopped (evicted: it resumes its session) and a new chat that starts
// claude (no spare: TurnRequest.AdoptSpare unset) for reference. The spare is waited
// for until its claude is idle (started and waiting for a prompt), as one is once the
// previous new session's turn is some seconds past. Sandbox off: sandboxed, a spare
// binds a chat's claude state and serves only that chat's next new session. Reported:
// each one's p50 and spare-p50 ÷ warm-p50 (the goal: at most 1.3). Run with
// -benchtime 5x or more.
func BenchmarkNewSessionSpare(b *testing.B) {
	e := newReal(b, func(c *Config) { c.Spare, c.Sandbox, c.WarmMemory = true, SandboxOff, NoWarmMemoryLimit })
	ready := make(chan *proc, 4)
	e.r.mu.Lock()
	e.r.spares.ready = func(p *proc) { ready <- p }
	e.r.mu.Unlock()
	firstText := func(req TurnRequest) (time.Duration, Result) {
		start := time.Now()
		turn, err := e.r.Run(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		var text time.Time
		for ev := range turn.Events() {
			if ev.Kind == EventText && text.IsZero() {
				text = time.Now()
			}
		}
		res := turn.Wait()
		if res.Err != nil || text.IsZero() {
			b.Fatalf("turn %s: %+v", req.Key, res.Err)
		}
		return text.Sub(start), res
	}
	newChat := func(key string, spare bool) TurnRequest {
		return TurnRequest{Key: key, SessionID: uuid.NewString(), NewSession: true, AdoptSpare: spare, Prompt: "hello " + key}
	}
	// The warm chat, and two new sessions alike: the spare starts after the second.
	warmSID := uuid.NewString()
	firstText(TurnRequest{Key: "warm", SessionID: warmSID, NewSession: true, AdoptSpare: true, Prompt: "warm up"})
	firstText(newChat("seed", true))
	sp := <-ready
	var warm, spare, evicted, cold []time.Duration
	b.ResetTimer()
	for i := range b.N {
		waitIdle(b, sp.pid)
		d, _ := firstText(TurnRequest{Key: "warm", SessionID: warmSID, Prompt: "warm " + strconv.Itoa(i)})
		warm = append(warm, d)

		d, res := firstText(newChat("new-"+strconv.Itoa(i), true))
		if res.Wait.Start != StartSpare || res.PID != sp.pid {
			b.Fatalf("new chat %d: start %q pid %d, the spare %d", i, res.Wait.Start, res.PID, sp.pid)
		}
		spare = append(spare, d)
		sp = <-ready
		if sp == nil {
			b.Fatal("no replacement spare")
		}

		// A chat that talked before, its claude stopped since (evicted): it
		// resumes its session in a new claude.
		key := "back-" + strconv.Itoa(i)
		q := newChat(key, false)
		_, res = firstText(q)
		e.r.Stop(key)
		waitGone(b, res.PID, 10*time.Second)
		waitIdle(b, sp.pid)
		d, res = firstText(TurnRequest{Key: key, SessionID: q.SessionID, Prompt: "back " + strconv.Itoa(i)})
		if res.Wait.Start != StartCold {
			b.Fatalf("returning chat %d: start %q", i, res.Wait.Start)
		}
		evicted = append(evicted, d)

		waitIdle(b, sp.pid)
		d, _ = firstText(newChat("cold-"+strconv.Itoa(i), false))
		cold = append(cold, d)
		e.r.Stop("new-" + strconv.Itoa(i)) // keep the pool to the warm chat and the spare
		e.r.Stop("cold-" + strconv.Itoa(i))
		e.r.Stop(key)
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(warm), "warm-p50-ms")
	b.ReportMetric(p50(spare), "spare-p50-ms")
	b.ReportMetric(p50(spare)/p50(warm), "spare-ratio")
	b.ReportMetric(p50(evicted), "evicted-p50-ms")
	b.ReportMetric(p50(cold), "coldnew-p50-ms")
}

// waitIdle waits (bounded) until process pid used no CPU for 200 ms: a claude started
// and waiting for its first prompt.
func waitIdle(b *testing.B, pid int) {
	b.Helper()
	cpu := func() string {
		s, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return ""
		}
		f := strings.Fields(string(s)[strings.LastIndexByte(string(s), ')')+2:])
		return f[11] + " " + f[12] // utime stime
	}
	deadline := time.Now().Add(20 * time.Second)
	last := cpu()
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		now := cpu()
		if now == last {
			return
		}
		last = now
	}
	b.Fatalf("claude %d still busy after 20 s", pid)
}
