package runner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

// recordingMeter is a memoryMeter that answers from a table (every pid not in it:
// dflt) and records the pids it was asked about.
type recordingMeter struct {
	mu    sync.Mutex
	size  map[int]int64
	dflt  int64
	asked []int
}

func (m *recordingMeter) Memory(pid int) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, pid)
	if v, ok := m.size[pid]; ok {
		return v, v > 0
	}
	return m.dflt, m.dflt > 0
}

func (m *recordingMeter) calls() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.asked)
}

const mb = int64(1) << 20

// The warm_memory budget: the idle processes least worth keeping are stopped while the
// warm ones hold more than the budget (with room for the one about to start, counted at
// the mean of the measured ones); busy ones never; both limits apply.
func TestPoolMemoryBudget(t *testing.T) {
	t.Parallel()
	type planted struct {
		key  string
		mem  int64 // 0: not measured yet
		uses int
		busy bool
	}
	for _, tc := range []struct {
		name    string
		budget  int64
		maxWarm int
		procs   []planted
		room    bool
		want    []string // evicted, in order
	}{
		{"fits", 1000 * mb, 0, []planted{{"a", 210 * mb, 1, false}, {"b", 210 * mb, 1, false}, {"c", 210 * mb, 1, false}}, true, nil},
		{"room for one more stops the least used", 700 * mb, 0, []planted{{"a", 210 * mb, 3, false}, {"b", 210 * mb, 1, false}, {"c", 210 * mb, 2, false}}, true, []string{"b"}},
		{"over after a turn grew one", 600 * mb, 0, []planted{{"a", 400 * mb, 3, false}, {"b", 210 * mb, 1, false}}, false, []string{"b"}},
		{"several go until it fits", 500 * mb, 0, []planted{{"a", 200 * mb, 4, false}, {"b", 200 * mb, 1, false}, {"c", 200 * mb, 2, false}, {"d", 200 * mb, 3, false}}, false, []string{"b", "c"}},
		{"not measured counts as the mean", 650 * mb, 0, []planted{{"a", 300 * mb, 3, false}, {"b", 0, 1, false}}, true, []string{"b"}},
		{"nothing measured: 210 MB each", 640 * mb, 0, []planted{{"a", 0, 2, false}, {"b", 0, 1, false}, {"c", 0, 3, false}}, true, []string{"b"}},
		{"busy ones stay over the budget", 300 * mb, 0, []planted{{"a", 210 * mb, 1, true}, {"b", 210 * mb, 1, true}}, true, nil},
		{"a busy one makes an idle one go", 300 * mb, 0, []planted{{"a", 210 * mb, 1, true}, {"b", 210 * mb, 9, false}}, false, []string{"b"}},
		{"count binds before memory", 10000 * mb, 2, []planted{{"a", 210 * mb, 1, false}, {"b", 210 * mb, 2, false}}, true, []string{"a"}},
		{"memory binds before count", 500 * mb, 10, []planted{{"a", 210 * mb, 1, false}, {"b", 210 * mb, 2, false}}, true, []string{"a"}},
		{"no budget: count only", NoWarmMemoryLimit, 3, []planted{{"a", 900 * mb, 1, false}, {"b", 900 * mb, 2, false}}, true, nil},
		{"a budget below one process keeps none idle", 100 * mb, 0, []planted{{"a", 210 * mb, 5, false}}, false, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, clk := newPolicyRunner(t, 4, tc.maxWarm)
			r.cfg.WarmMemory = tc.budget
			for _, pl := range tc.procs {
				clk.advance(time.Second)
				p := plant(r, pl.key, time.Second, pl.uses)
				r.mu.Lock()
				p.mem, p.busy = pl.mem, pl.busy
				r.mu.Unlock()
			}
			r.mu.Lock()
			ev := r.evictLocked(&r.cfg, tc.room)
			r.mu.Unlock()
			if got := keysOf(ev); !slices.Equal(got, tc.want) {
				t.Fatalf("evicted %v, want %v", got, tc.want)
			}
		})
	}
}

// An agent's warm_memory caps its own processes within the runner's: making room for one
// of its processes stops its own, never another agent's.
func TestPoolAgentMemory(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r, err := New(Config{Command: "claude-not-here-policy-test", Workspace: ws, StateDir: t.TempDir(), WarmMemory: 1000 * mb,
		Agents: map[string]Config{"ops": {Command: "claude-not-here-policy-test", Workspace: ws, WarmMemory: 450 * mb},
			"big": {Command: "claude-not-here-policy-test", Workspace: ws, WarmMemory: 5000 * mb}, "same": {Command: "claude-not-here-policy-test", Workspace: ws}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int64{r.profile("ops").WarmMemory, r.profile("big").WarmMemory, r.profile("same").WarmMemory}; !slices.Equal(got, []int64{450 * mb, 1000 * mb, 1000 * mb}) {
		t.Fatalf("agents' warm_memory %v: an agent's own, capped by the runner's", got)
	}
	main := plant(r, "main", time.Second, 1)
	main.mem = 200 * mb
	for i, key := range []string{"ops-a", "ops-b"} {
		p := plant(r, key, time.Second, 2-i)
		p.cfg, p.mem = r.profile("ops"), 200*mb
	}
	r.mu.Lock()
	ev := r.evictLocked(r.profile("ops"), true)
	r.mu.Unlock()
	if got := keysOf(ev); !slices.Equal(got, []string{"ops-b"}) {
		t.Fatalf("evicted %v, want ops' own least used", got)
	}
}

// measure reads a released process through the meter and stops the least worth when the
// pool no longer fits: the process just measured when that is it.
func TestPoolMeasure(t *testing.T) {
	t.Parallel()
	r, clk := newPolicyRunner(t, 4, 0)
	r.cfg.WarmMemory = 650 * mb
	m := &recordingMeter{size: map[int]int64{101: 200 * mb, 102: 200 * mb, 103: 300 * mb}}
	r.meter = m
	var ps []*proc
	for i, key := range []string{"often", "once", "grown"} {
		clk.advance(time.Second)
		p := plant(r, key, time.Second, []int{5, 1, 3}[i])
		p.pid = 101 + i
		ps = append(ps, p)
	}
	for _, p := range ps[:2] {
		if ev := r.measured(p); len(ev) > 0 {
			t.Fatalf("evicted %v within the budget", keysOf(ev))
		}
	}
	if w := r.Pool(); w.Warm != 3 || w.Measured != 2 || w.Memory != 600*mb {
		t.Fatalf("pool %+v: 2 measured at 200 MB, one counted at their mean", w)
	}
	// The third measured: 700 MB of 650, so the least used ("once") is stopped.
	if ev := r.measured(ps[2]); !slices.Equal(keysOf(ev), []string{"once"}) {
		t.Fatalf("evicted %v, want once", keysOf(ev))
	}
	if got := mapKeys(r); !slices.Equal(got, []string{"grown", "often"}) {
		t.Fatalf("warm %v after the budget was exceeded", got)
	}
	if got := m.calls(); !slices.Equal(got, []int{101, 102, 103}) {
		t.Fatalf("meter asked about %v", got)
	}
	// A process no longer in the pool is not counted again.
	if ev := r.measured(ps[1]); len(ev) > 0 {
		t.Fatalf("evicted %v", keysOf(ev))
	}
	if w := r.Pool(); w.Warm != 2 || w.Memory != 500*mb {
		t.Fatalf("pool %+v", w)
	}
}

func mapKeys(r *Runner) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.procs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// With a budget for two fake claudes of 100 MB each, three chats keep two warm; the chat
// whose process was stopped resumes its session (--resume, its transcript) in a new one,
// and the pool reports its first answer as cold, the next as warm.
func TestFakeWarmMemoryBudget(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.WarmMemory = 250 * mb })
	m := &recordingMeter{dflt: 100 * mb}
	f.r.meter, f.r.unmeasured = m, 100*mb // one not measured yet counts the same
	sids := map[string]string{}
	pids := map[string]int{}
	for _, k := range []string{"a", "b", "c"} {
		sids[k] = uuid.NewString()
		res := runTurn(t, f.r, TurnRequest{Key: k, SessionID: sids[k], NewSession: true, Prompt: "hello " + k})
		mustOK(t, res, "echo: hello "+k)
		pids[k] = res.PID
	}
	warm := f.r.Warm()
	if len(warm) != 2 || warm["c"] == 0 {
		t.Fatalf("warm %v: want c's and one other within 250 MB", warm)
	}
	gone := "a"
	if warm["a"] != 0 {
		gone = "b"
	}
	waitGone(t, pids[gone], 5*time.Second)
	res := runTurn(t, f.r, TurnRequest{Key: gone, SessionID: sids[gone], Prompt: "back"})
	mustOK(t, res, "echo: back")
	if !res.NewProcess || res.Wait.Start != StartCold || !strings.Contains(res.Wait.String(), "warm holding") {
		t.Fatalf("returning chat: new process %v, wait %q", res.NewProcess, res.Wait.String())
	}
	starts := f.starts(t)
	if last := starts[len(starts)-1]; !strings.Contains(last, "--resume "+sids[gone]) {
		t.Fatalf("the returning chat's claude was started with %q, want --resume %s", last, sids[gone])
	}
	again := runTurn(t, f.r, TurnRequest{Key: gone, SessionID: sids[gone], Prompt: "and again"})
	mustOK(t, again, "echo: and again")
	if again.NewProcess {
		t.Fatal("the next turn did not run warm")
	}
	p := f.r.Pool()
	if p.FirstAnswerCold.Turns != 1 || p.FirstAnswerWarm.Turns != 1 || p.FirstAnswerCold.P50 <= 0 || p.FirstAnswerWarm.P50 <= 0 {
		t.Fatalf("first answers: warm %+v, cold %+v", p.FirstAnswerWarm, p.FirstAnswerCold)
	}
	if p.Warm > 2 || p.WarmMemory != 250*mb {
		t.Fatalf("pool %+v", p)
	}
}

// The default budget: a quarter of the machine's memory, at least one real claude's
// worth, at most 16 GB; 2 GB when the machine's memory is unknown.
func TestDefaultWarmMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ total, want int64 }{
		{0, 2048 * mb},
		{512 * mb, 256 * mb},
		{1024 * mb, 256 * mb},
		{2048 * mb, 512 * mb},
		{8192 * mb, 2048 * mb},
		{256 << 30, 16 << 30},
	} {
		if got := DefaultWarmMemory(tc.total); got != tc.want {
			t.Errorf("DefaultWarmMemory(%d MB) = %d MB, want %d MB", tc.total>>20, got>>20, tc.want>>20)
		}
	}
}

// The first answers of returning chats: warm and cold apart, failures left out, the
// percentiles over the latest turns.
func TestAnswerTimes(t *testing.T) {
	t.Parallel()
	var a answerTimes
	began := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ok := func(s Start) Result { return Result{Wait: Wait{Start: s}} }
	for i := 1; i <= 10; i++ {
		a.record(ok(StartWarm), began.Add(time.Duration(i)*100*time.Millisecond), began)
	}
	a.record(ok(StartCold), began.Add(2*time.Second), began)
	a.record(ok(StartDied), began.Add(3*time.Second), began)
	a.record(Result{Err: newError(KindCrash, "x"), Wait: Wait{Start: StartCold}}, began.Add(time.Hour), began)
	a.record(Result{}, began.Add(time.Hour), began) // stopped before it got a process
	warm, cold := a.summary()
	if warm != (Latency{Turns: 10, P50: 600 * time.Millisecond, P90: 900 * time.Millisecond}) {
		t.Errorf("warm %+v", warm)
	}
	if cold != (Latency{Turns: 2, P50: 3 * time.Second, P90: 3 * time.Second}) {
		t.Errorf("cold %+v", cold)
	}
	for range answerWindow {
		a.record(ok(StartWarm), began.Add(time.Millisecond), began)
	}
	if warm, _ := a.summary(); warm.Turns != 10+answerWindow || warm.P90 != time.Millisecond {
		t.Errorf("after a window of 1 ms answers: %+v", warm)
	}
}

// A warm process is measured after its first turn and then at most once per
// remeasureAfter, not after every turn (reading smaps_rollup after each was the host's
// largest added cost per warm turn, issue 58).
func TestPoolMeasureCadence(t *testing.T) {
	t.Parallel()
	r, clk := newPolicyRunner(t, 4, 0)
	m := &recordingMeter{size: map[int]int64{101: 200 * mb}}
	r.meter = m
	p := plant(r, "chat", time.Second, 1)
	p.pid = 101
	turn := func() []int {
		r.mu.Lock()
		p.busy = true
		r.mu.Unlock()
		r.release(p, true)
		r.wg.Wait()
		return m.calls()
	}
	if got := turn(); !slices.Equal(got, []int{101}) {
		t.Fatalf("first turn: meter asked about %v, want [101]", got)
	}
	for range 5 {
		clk.advance(remeasureAfter / 10)
		if got := turn(); len(got) != 1 {
			t.Fatalf("a turn within %v of the last measure measured again: %v", remeasureAfter, got)
		}
	}
	clk.advance(remeasureAfter / 2)
	if got := turn(); !slices.Equal(got, []int{101, 101}) {
		t.Fatalf("a turn %v after the last measure: meter asked about %v, want a second measure", remeasureAfter, got)
	}
	r.mu.Lock()
	r.removeLocked(p)
	left := len(r.measuredAt)
	r.mu.Unlock()
	if left != 0 {
		t.Fatalf("a removed process's measure time kept (%d)", left)
	}
}

// A warm process is measured measureDelay after its turn, not as the turn ends: on one
// processor the measure ran before the answer went on. One stopped meanwhile is not
// measured, and Close drops a measure that still waits.
func TestPoolMeasuresAfterTheAnswer(t *testing.T) {
	t.Parallel()
	r, _ := newPolicyRunner(t, 4, 0)
	clk := tstimetest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r.clock, r.measureAfter = clk, measureDelay
	m := &recordingMeter{size: map[int]int64{101: 200 * mb, 102: 200 * mb}}
	r.meter = m
	// turn plants key's process, ends a turn of it and returns once its measure waits
	// for its delay.
	turn := func(key string, pid int) *proc {
		t.Helper()
		p := plant(r, key, time.Second, 1)
		p.pid = pid
		r.mu.Lock()
		p.busy = true
		r.mu.Unlock()
		armed := clk.Waiters()
		r.release(p, true) // arms its idle timer, and the measure its delay
		if !clk.BlockUntil(armed+2, 10*time.Second) {
			t.Fatalf("the measure of %s did not wait for its delay", key)
		}
		return p
	}
	p := turn("chat", 101)
	if got := m.calls(); len(got) != 0 {
		t.Fatalf("measured as the turn ended: %v", got)
	}
	clk.Advance(measureDelay)
	r.wg.Wait()
	if got := m.calls(); !slices.Equal(got, []int{101}) {
		t.Fatalf("after %v: meter asked about %v, want [101]", measureDelay, got)
	}

	// A process stopped before its measure is not measured: no walk of its tree.
	q := turn("other", 102)
	r.mu.Lock()
	r.removeLocked(q)
	r.mu.Unlock()
	clk.Advance(measureDelay)
	r.wg.Wait()
	if got := m.calls(); len(got) != 1 {
		t.Fatalf("a stopped process was measured: %v", got)
	}

	// Close drops a measure that still waits.
	q = turn("third", 102)
	r.mu.Lock()
	r.removeLocked(p) // planted: no process for Close to stop
	r.removeLocked(q)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close with a measure waiting: %v", err)
	}
	if got := m.calls(); len(got) != 1 {
		t.Fatalf("a measure ran after Close: %v", got)
	}
}
