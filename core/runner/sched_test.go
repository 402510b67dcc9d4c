package runner

import (
	"context"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// testClock is an injected clock that moves only when told to.
type testClock struct {
	tstime.Std // the rest of the clock (the pool's idle timers) is real
	mu         sync.Mutex
	t          time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newPolicyRunner is a Runner whose scheduler and pool are driven by hand: no process is
// ever started (the command does not exist), processes are planted with plant.
func newPolicyRunner(t *testing.T, maxConcurrent, maxWarm int) (*Runner, *testClock) {
	t.Helper()
	r, err := New(Config{Command: "claude-not-here-policy-test", Workspace: t.TempDir(), StateDir: t.TempDir(), MaxConcurrent: maxConcurrent, MaxWarm: maxWarm, WarmMemory: NoWarmMemoryLimit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox's probe reads the configuration, which tests change
	// next (r.cfg.WarmMemory).
	<-r.sandboxDone
	clk := newTestClock()
	r.clock = clk
	r.measureAfter = 0 // measured as release returns: r.wg.Wait waits for it
	return r, clk
}

// plant puts an idle warm process for key into the pool: startup is its measured start
// time, uses the turns it ran (its worth follows from both).
func plant(r *Runner, key string, startup time.Duration, uses int) *proc {
	p := &proc{cfg: &r.cfg, key: key, exited: make(chan struct{})}
	p.startup.Store(int64(startup))
	r.mu.Lock()
	defer r.mu.Unlock()
	p.uses = uses
	p.lastUsed = r.clock.Now()
	p.prio = r.keepValueLocked(p)
	r.procs[key] = p
	return p
}

func enqueue(r *Runner, key string) *ticket {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.enqueueLocked(key, newTurn(key))
}

func granted(tk *ticket) bool {
	select {
	case <-tk.ready:
		return true
	default:
		return false
	}
}

// A waiting turn whose key has an idle warm process goes ahead of turns that began to
// wait up to 4 of that process's start times before it (at most 30 s), and no further.
func TestSchedWarmPreferenceIsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		startup time.Duration // of the warm turn's process
		later   time.Duration // the warm turn began to wait this long after the cold one
		warm    bool          // the warm turn runs first
	}{
		{"warm a little later goes first", time.Second, time.Second, true},
		{"warm just within the bonus goes first", time.Second, 4*time.Second - time.Millisecond, true},
		{"warm beyond the bonus waits", time.Second, 4*time.Second + time.Millisecond, false},
		{"a cheap start earns less", 100 * time.Millisecond, time.Second, false},
		{"the bonus is capped at 30 s", time.Minute, 31 * time.Second, false},
		{"same time: warm first", 10 * time.Millisecond, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, clk := newPolicyRunner(t, 1, 4)
			running := enqueue(r, "running")
			cold := enqueue(r, "cold")
			clk.advance(tc.later)
			plant(r, "warm", tc.startup, 1)
			warm := enqueue(r, "warm")
			if !granted(running) || granted(cold) || granted(warm) {
				t.Fatal("only the first turn should run")
			}
			r.leave(running)
			if granted(warm) != tc.warm || granted(cold) == tc.warm {
				t.Fatalf("warm granted %v, cold granted %v; want warm first: %v", granted(warm), granted(cold), tc.warm)
			}
		})
	}
}

// A cold turn is overtaken by warm turns only while they began to wait within the bonus
// after it: a steady stream of warm turns does not starve it.
func TestSchedNoStarvation(t *testing.T) {
	t.Parallel()
	r, clk := newPolicyRunner(t, 2, 4)
	run := []*ticket{enqueue(r, "w0"), enqueue(r, "w1")}
	cold := enqueue(r, "cold")
	overtaken := 0
	for i := 2; !granted(cold); i++ {
		if i > 100 {
			t.Fatal("the cold turn starved")
		}
		// Every 100 ms a chat with an idle warm process (1 s start: 4 s bonus) asks.
		clk.advance(100 * time.Millisecond)
		key := "w" + strconv.Itoa(i)
		plant(r, key, time.Second, 1)
		tk := enqueue(r, key)
		r.leave(run[0])
		run = append(run[1:], tk)
		if granted(tk) {
			overtaken++
		}
	}
	// Overtaken by the warm turns that began to wait less than 4 s after it, then
	// served (at 4 s the tie goes to the earlier).
	if overtaken != 39 {
		t.Fatalf("overtaken %d times, want 39 (warm turns every 100 ms for 4 s)", overtaken)
	}
}

// Turns of one key run in Run order; one stopped while queued does not hold up the next;
// Wait says how long each waited for what.
func TestSchedLaneOrderAndWait(t *testing.T) {
	t.Parallel()
	r, clk := newPolicyRunner(t, 1, 4)
	a1 := enqueue(r, "a")
	a2 := enqueue(r, "a")
	a3 := enqueue(r, "a")
	clk.advance(time.Second)
	b := enqueue(r, "b")
	clk.advance(500 * time.Millisecond)
	r.leave(a2) // stopped while queued
	if granted(a2) || granted(a3) || granted(b) {
		t.Fatal("a turn ran beside the running one")
	}
	r.leave(a1)
	// a3 began to wait for a slot now, b 0.5 s ago: b first.
	if !granted(b) || granted(a3) {
		t.Fatalf("b granted %v, a3 granted %v", granted(b), granted(a3))
	}
	clk.advance(2 * time.Second)
	r.leave(b)
	if !granted(a3) {
		t.Fatal("a3 not granted")
	}
	st := stopper{ctx: context.Background(), t: a3.turn}
	w, _, ok := r.waitTurn(st, a3)
	if want := (Wait{Previous: 1500 * time.Millisecond, Slot: 2 * time.Second, Running: 1, Ahead: 1, Slots: 1}); !ok || w != want {
		t.Fatalf("wait %+v, want %+v", w, want)
	}
	r.leave(a3)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running != 0 || len(r.waiting) != 0 || len(r.lanes) != 0 || len(r.active) != 0 {
		t.Fatalf("scheduler not empty: running %d waiting %d lanes %v active %v", r.running, len(r.waiting), r.lanes, r.active)
	}
}

// The pool evicts the idle process least worth keeping — start time × uses, aged by the
// evictions since — and keeps the process of a key with a turn queued while another is idle.
func TestPoolEvictionChoice(t *testing.T) {
	t.Parallel()
	type planted struct {
		key     string
		startup time.Duration
		uses    int
		busy    bool
		queued  bool // the key has a turn waiting
		age     time.Duration
	}
	for _, tc := range []struct {
		name  string
		procs []planted
		want  string
	}{
		{"fewer uses goes", []planted{{key: "a", startup: time.Second, uses: 1}, {key: "b", startup: time.Second, uses: 3}}, "a"},
		{"a costly start stays", []planted{{key: "cheap", startup: 200 * time.Millisecond, uses: 2}, {key: "costly", startup: 2 * time.Second, uses: 1}}, "cheap"},
		{"uses count up to 8", []planted{{key: "many", startup: time.Second, uses: 50}, {key: "nine", startup: 1100 * time.Millisecond, uses: 8}}, "many"},
		{"a queued turn keeps its process", []planted{{key: "q", startup: 100 * time.Millisecond, uses: 1, queued: true}, {key: "b", startup: time.Second, uses: 5}}, "b"},
		{"all queued: least worth", []planted{{key: "q1", startup: time.Second, uses: 1, queued: true}, {key: "q2", startup: time.Second, uses: 2, queued: true}}, "q1"},
		{"busy never", []planted{{key: "busy", startup: time.Millisecond, uses: 1, busy: true}, {key: "b", startup: time.Second, uses: 5}}, "b"},
		{"all busy: none", []planted{{key: "busy", startup: time.Second, uses: 1, busy: true}}, ""},
		{"a tie goes least recently used", []planted{{key: "new", startup: time.Second, uses: 1}, {key: "old", startup: time.Second, uses: 1, age: time.Minute}}, "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, _ := newPolicyRunner(t, 4, 4)
			for _, pl := range tc.procs {
				p := plant(r, pl.key, pl.startup, pl.uses)
				r.mu.Lock()
				p.busy = pl.busy
				p.lastUsed = p.lastUsed.Add(-pl.age)
				if pl.queued {
					r.lanes[pl.key] = []*ticket{{key: pl.key}}
				}
				r.mu.Unlock()
			}
			r.mu.Lock()
			v := r.victimLocked(nil)
			r.mu.Unlock()
			got := ""
			if v != nil {
				got = v.key
			}
			if got != tc.want {
				t.Fatalf("evicted %q, want %q", got, tc.want)
			}
		})
	}
}

// Worth ages: a process used often long ago goes before one used once since, once the
// evictions in between raised the pool's inflation past its worth.
func TestPoolEvictionAges(t *testing.T) {
	t.Parallel()
	r, _ := newPolicyRunner(t, 2, 2)
	plant(r, "busy-long-ago", time.Second, 6) // worth 6
	for i := range 3 {
		key := "passing" + strconv.Itoa(i)
		plant(r, key, 5*time.Second, 1) // worth inflation + 5
		r.mu.Lock()
		ev := r.evictLocked(&r.cfg, true) // room for one more of 2
		r.mu.Unlock()
		if len(ev) != 1 {
			t.Fatalf("evicted %d", len(ev))
		}
		if want := []string{"passing0", "busy-long-ago", "passing1"}[i]; ev[0].key != want {
			t.Fatalf("eviction %d: %q, want %q", i, ev[0].key, want)
		}
	}
}

// An agent's max_warm caps its own warm processes within the runner's limit: making room
// for one of its processes evicts its own least worth, never another agent's.
func TestPoolAgentCap(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r, err := New(Config{Command: "claude-not-here-policy-test", Workspace: ws, StateDir: t.TempDir(), MaxConcurrent: 2, MaxWarm: 4,
		Agents: map[string]Config{"ops": {Command: "claude-not-here-policy-test", Workspace: ws, MaxWarm: 2}, "big": {Command: "claude-not-here-policy-test", Workspace: ws, MaxWarm: 9}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ops := r.profile("ops")
	if ops.MaxWarm != 2 || r.profile("big").MaxWarm != 4 || r.profile("").MaxWarm != 4 {
		t.Fatalf("max_warm: ops %d, big %d (the runner's limit caps it), main %d", ops.MaxWarm, r.profile("big").MaxWarm, r.profile("").MaxWarm)
	}
	cheap := plant(r, "main-cheap", time.Second, 1)
	cheap.cfg = r.profile("")
	for i, cost := range []time.Duration{3 * time.Second, 2 * time.Second} {
		p := plant(r, "ops"+strconv.Itoa(i), cost, 1)
		p.cfg = ops
	}
	r.mu.Lock()
	ev := r.evictLocked(ops, true) // room for a third ops process
	r.mu.Unlock()
	if len(ev) != 1 || ev[0].key != "ops1" {
		t.Fatalf("evicted %v, want the cheaper ops process only", keysOf(ev))
	}
	r.mu.Lock()
	ev = r.evictLocked(r.profile(""), true)
	r.mu.Unlock()
	if len(ev) != 0 {
		t.Fatalf("evicted %v with room left", keysOf(ev))
	}
}

func keysOf(ps []*proc) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.key)
	}
	return out
}

// A chat's next turn, queued behind the one running, runs on the process that turn
// leaves, ahead of another chat that was waiting (it would start a process and stop that
// one): two starts for three turns, not three. Result.Wait says why each turn waited.
func TestFakeQueuedTurnRunsWarm(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.MaxConcurrent, c.MaxWarm = 1, 1 })
	clk := newTestClock()
	f.r.clock = clk
	sa, sb := uuid.NewString(), uuid.NewString()
	run := func(key, sid string, fresh bool) *Turn {
		tu, err := f.r.Run(context.Background(), TurnRequest{Key: key, SessionID: sid, NewSession: fresh, Prompt: "ask", AskPermission: true})
		if err != nil {
			t.Fatal(err)
		}
		return tu
	}
	// ask waits for the permission question, shifts the clock by d and answers.
	ask := func(tu *Turn, d time.Duration) Result {
		var res Result
		for e := range tu.Events() {
			switch e.Kind {
			case EventPermission:
				clk.advance(d)
				e.Permission.Answer(Decision{Allow: true})
			case EventResult:
				res = *e.Result
			}
		}
		if res.Err != nil {
			t.Fatalf("turn failed: %v", res.Err)
		}
		return res
	}
	a1 := run("a", sa, true)
	var a2, b1 *Turn
	var r1 Result
	for e := range a1.Events() {
		switch e.Kind {
		case EventPermission:
			// a's process costs 1 s to start as far as the pool knows: a 4 s bonus.
			f.r.mu.Lock()
			f.r.procs["a"].startup.Store(int64(time.Second))
			f.r.mu.Unlock()
			a2 = run("a", sa, false)
			b1 = run("b", sb, true)
			clk.advance(500 * time.Millisecond)
			e.Permission.Answer(Decision{Allow: true})
		case EventResult:
			r1 = *e.Result
		}
	}
	r2 := ask(a2, time.Second)
	r3 := ask(b1, 0)
	if r1.Wait.Start != StartCold || r2.Wait.Start != StartWarm || r2.PID != r1.PID || r3.Wait.Start != StartCold {
		t.Fatalf("starts: %v %v %v (pids %d %d)", r1.Wait.Start, r2.Wait.Start, r3.Wait.Start, r1.PID, r2.PID)
	}
	if n := len(f.starts(t)); n != 2 {
		t.Fatalf("%d processes started for 3 turns, want 2", n)
	}
	if r2.Wait.Previous != 500*time.Millisecond || r2.Wait.Slot != 0 {
		t.Fatalf("a2 wait %+v", r2.Wait)
	}
	w := r3.Wait
	if w.Slot != 1500*time.Millisecond || w.Running != 1 || w.Ahead != 0 || w.Slots != 1 || w.Evicted != "a" || w.Warm != 1 || w.MaxWarm != 1 || w.Startup <= 0 {
		t.Fatalf("b1 wait %+v", w)
	}
	for _, want := range []string{"waited 1.5 s for a free slot (1 of 1 running)", "started claude in ", "(no warm process; stopped the idle one of a to make room, 1 of 1 warm)"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("%q lacks %q", w.String(), want)
		}
	}
	if got := r2.Wait.String(); got != "waited 0.5 s for the previous turn of this chat, warm claude process" {
		t.Errorf("a2: %q", got)
	}
}

func TestWaitString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    Wait
		want string
	}{
		{Wait{}, ""},
		{Wait{Start: StartWarm, Slot: 50 * time.Millisecond}, "no wait, warm claude process"},
		{Wait{Start: StartCold, Slot: 1200 * time.Millisecond, Running: 4, Slots: 4, Ahead: 2, Warm: 4, WarmBusy: 4, MaxWarm: 4, Startup: 900 * time.Millisecond},
			"waited 1.2 s for a free slot (4 of 4 running, 2 ahead), started claude in 0.9 s (no warm process: 4 of 4 warm, 4 in use)"},
		{Wait{Start: StartCold, Warm: 1, MaxWarm: 4}, "no wait, started claude (no warm process)"},
		{Wait{Start: StartChanged, Previous: 3 * time.Second}, "waited 3.0 s for the previous turn of this chat, started claude (settings changed)"},
		{Wait{Start: StartDied}, "no wait, started claude (the warm process had exited)"},
		{Wait{Start: StartOneShot}, "no wait, started claude (one-shot mode)"},
	} {
		if got := tc.w.String(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.w, got, tc.want)
		}
	}
}
