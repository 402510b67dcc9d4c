package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// BenchmarkNewSessionSpare (issue 84, goal 2): with the real CLI against the fake API and
// agent.spare on, a new chat's first answer (Run → claude's first text) on the agent's
// spare beside a warm turn's, interleaved in each iteration, with a returning chat whose
// process was stopped (evicted: it resumes its session) and a new chat that starts
// claude (no spare: TurnRequest.AdoptSpare unset) for reference. The spare is waited
// for until its claude is idle (started and waiting for a prompt), as one is once the
// previous new session's turn is some seconds past. Sandbox off; BenchmarkNewSessionSpare-
// Sandboxed is the same with the sandbox on (a new chat there adopts the spare started with
// directories of its own). Reported: each one's p50 and spare-p50 ÷ warm-p50 (the goal: at
// most 1.3). Run with -benchtime 5x or more.
func BenchmarkNewSessionSpare(b *testing.B) { benchNewSessionSpare(b, SandboxOff) }

// BenchmarkNewSessionSpareSandboxed is BenchmarkNewSessionSpare with the sandbox on.
func BenchmarkNewSessionSpareSandboxed(b *testing.B) {
	needBwrap(b)
	benchNewSessionSpare(b, SandboxAuto)
}

func benchNewSessionSpare(b *testing.B, sandbox string) {
	e := newReal(b, func(c *Config) { c.Spare, c.Sandbox, c.WarmMemory = true, sandbox, NoWarmMemoryLimit })
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
		return TurnRequest{Key: key, SessionID: uuid.NewString(), NewSession: true, AdoptSpare: spare, Prompt: "hello " + key, MediaDir: "m-" + key}
	}
	// The warm chat, and two new sessions alike: the spare starts after the second.
	warmSID := uuid.NewString()
	firstText(TurnRequest{Key: "warm", SessionID: warmSID, NewSession: true, AdoptSpare: true, Prompt: "warm up", MediaDir: "m-warm"})
	firstText(newChat("seed", true))
	sp := <-ready
	var warm, spare, evicted, cold []time.Duration
	b.ResetTimer()
	for i := range b.N {
		waitIdle(b, sp.pid)
		d, _ := firstText(TurnRequest{Key: "warm", SessionID: warmSID, Prompt: "warm " + strconv.Itoa(i), MediaDir: "m-warm"})
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
		d, res = firstText(TurnRequest{Key: key, SessionID: q.SessionID, Prompt: "back " + strconv.Itoa(i), MediaDir: q.MediaDir})
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
	b.ReportMetric(p50ms(warm), "warm-p50-ms")
	b.ReportMetric(p50ms(spare), "spare-p50-ms")
	b.ReportMetric(p50ms(spare)/p50ms(warm), "spare-ratio")
	b.ReportMetric(p50ms(evicted), "evicted-p50-ms")
	b.ReportMetric(p50ms(cold), "coldnew-p50-ms")
}

// p50ms is the median of d in milliseconds (0 for none); d is not changed.
func p50ms(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
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

// BenchmarkSessionFirstPrompt (issue 84, goal 2: where a new session's first answer
// goes): one claude (the real CLI against the fake API, started and primed as a spare
// is, with `initialize` and `get_context_usage`, and left idle) answers a process's
// first prompt, a second prompt in the same session, then — after `/clear`, which
// starts a new session in the same process — the new session's first prompt and its
// second. Each is Write → the first assistant line, p50 over the iterations. The fake
// answers every prompt with the same short text: its echo of the new session's first
// message (which carries claude's record of the /clear) made that answer several times
// longer, and claude writes the assistant line once the text is streamed, so the echo's
// length was measured as the session's cost.
func BenchmarkSessionFirstPrompt(b *testing.B) {
	fake := anthropictest.New()
	b.Cleanup(fake.Close)
	fake.SetResponder(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Reply{Text: "ok"} })
	var first, second, session, sessionSecond []time.Duration
	for range b.N {
		c := startBare(b, fake.URL())
		first = append(first, c.prompt(b, "first"))
		second = append(second, c.prompt(b, "second"))
		c.prompt(b, "/clear")
		session = append(session, c.prompt(b, "a new session's first"))
		sessionSecond = append(sessionSecond, c.prompt(b, "its second"))
		c.stop()
	}
	b.ReportMetric(p50ms(first), "process-first-p50-ms")
	b.ReportMetric(p50ms(second), "second-p50-ms")
	b.ReportMetric(p50ms(session), "session-first-p50-ms")
	b.ReportMetric(p50ms(sessionSecond), "session-second-p50-ms")
	b.ReportMetric(p50ms(session)/p50ms(second), "session-first-ratio")
}

// bareClaude is the real CLI in stream-json, driven directly (not by the runner: it
// sends /clear, which the runner never does).
type bareClaude struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startBare(b *testing.B, api string) *bareClaude {
	b.Helper()
	cmd := exec.Command(claudeBin(b), "-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--session-id", uuid.NewString())
	cmd.Env = append(os.Environ(), "HOME="+b.TempDir(), "ANTHROPIC_BASE_URL="+api, "ANTHROPIC_API_KEY=test")
	cmd.Dir = b.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &bareClaude{cmd: cmd, in: in, lines: make(chan string, 64)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	for _, q := range sparePriming {
		if _, err := in.Write(q.req); err != nil {
			b.Fatal(err)
		}
		c.until(b, string(q.id))
	}
	waitIdle(b, cmd.Process.Pid)
	return c
}

// prompt sends text and returns the time to claude's first assistant line, once the
// turn's result came and the process is idle again.
func (c *bareClaude) prompt(b *testing.B, text string) time.Duration {
	b.Helper()
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	start := time.Now()
	if _, err := c.in.Write(append(msg, '\n')); err != nil {
		b.Fatal(err)
	}
	var first time.Duration
	for l := range c.lines {
		if first == 0 && strings.Contains(l, `"type":"assistant"`) {
			first = time.Since(start)
		}
		if strings.Contains(l, `"type":"result"`) {
			waitIdle(b, c.cmd.Process.Pid)
			return first
		}
	}
	b.Fatalf("claude ended during %q", text)
	return 0
}

// until reads lines until one contains s.
func (c *bareClaude) until(b *testing.B, s string) {
	b.Helper()
	for l := range c.lines {
		if strings.Contains(l, s) {
			return
		}
	}
	b.Fatalf("claude ended before %s", s)
}

func (c *bareClaude) stop() {
	c.in.Close()
	_ = c.cmd.Wait()
}
