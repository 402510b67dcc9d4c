package schedule

import (
	"context"
	"errors"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/cron"
)

// memState is a State in memory (the store's in clawhost); it counts the
// records it got.
type memState struct {
	mu      sync.Mutex
	last    map[string]time.Time
	records int
}

func newState() *memState { return &memState{last: map[string]time.Time{}} }

func (m *memState) Runs(context.Context) (map[string]time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.last), nil
}

func (m *memState) Record(_ context.Context, job string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records++
	if at.After(m.last[job]) {
		m.last[job] = at
	}
	return nil
}

func (m *memState) get(job string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last[job]
}

// fakeClock is the core's fake clock (advances only when told; a wait
// fires when its time comes) with this file's names for its moves.
type fakeClock struct{ *tstimetest.Fake }

func newClock(t time.Time) *fakeClock { return &fakeClock{tstimetest.NewFake(t)} }

// advance moves the clock to t, firing the waits due.
func (c *fakeClock) advance(t time.Time) { c.Set(t) }

// waitWaiting blocks until n goroutines wait on the clock.
func (c *fakeClock) waitWaiting(t *testing.T, n int) {
	t.Helper()
	if !c.BlockUntil(n, 5*time.Second) {
		t.Fatalf("%d waiting on the clock, want %d", c.Waiters(), n)
	}
}

type recorder struct {
	mu   sync.Mutex
	runs []Run
	fail int // fail the next n fires
	got  chan Run
}

func newRecorder() *recorder { return &recorder{got: make(chan Run, 10)} }

func (r *recorder) fire(_ context.Context, run Run) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("store locked")
	}
	r.runs = append(r.runs, run)
	r.got <- run
	return nil
}

func (r *recorder) next(t *testing.T) Run {
	t.Helper()
	select {
	case run := <-r.got:
		return run
	case <-time.After(5 * time.Second):
		t.Fatal("no run")
		return Run{}
	}
}

func start(t *testing.T, jobs []Job, clock *fakeClock, rec *recorder, state State) context.CancelFunc {
	t.Helper()
	s := New(Options{Jobs: jobs, Fire: rec.fire, State: state, Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() { cancel(); <-done }
}

func TestSchedulerRunsWhenDueAndMakesUpOneMissedRun(t *testing.T) {
	t.Parallel()
	state := newState()
	daily, _ := cron.Parse("0 9 * * *")
	jobs := []Job{{Name: "morning", Cron: &daily, Location: time.UTC, Target: "tg:1", Prompt: "brief me"}}
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	clock, rec := newClock(t0), newRecorder()
	stop := start(t, jobs, clock, rec, state)
	clock.waitWaiting(t, 1)
	clock.advance(t0.Add(time.Hour)) // 09:00
	run := rec.next(t)
	if run.Job != "morning" || !run.At.Equal(t0.Add(time.Hour)) || run.Target != "tg:1" || run.Prompt != "brief me" {
		t.Fatalf("run %+v", run)
	}
	clock.waitWaiting(t, 1)
	stop()
	if last := state.get("morning"); !last.Equal(t0.Add(time.Hour)) {
		t.Fatalf("state: last run %s, want 09:00", last)
	}

	// Down over the next day's 09:00, back at 09:40: run once, late.
	clock2 := newClock(time.Date(2026, 11, 23, 9, 40, 0, 0, time.UTC))
	rec2 := newRecorder()
	stop = start(t, jobs, clock2, rec2, state)
	if run := rec2.next(t); !run.At.Equal(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("made-up run %+v", run)
	}
	clock2.waitWaiting(t, 1)
	stop()

	// Down over the day after's 09:00, back at 11:00: skipped.
	clock3 := newClock(time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC))
	rec3 := newRecorder()
	start(t, jobs, clock3, rec3, state)
	clock3.waitWaiting(t, 1)
	if len(rec3.runs) != 0 {
		t.Fatalf("a run two hours late was made up: %+v", rec3.runs)
	}
}

func TestSchedulerRetriesAFailedRunWithTheSameDueTime(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock, rec := newClock(t0), newRecorder()
	rec.fail = 1
	start(t, []Job{{Name: "hb", Every: 30 * time.Minute}}, clock, rec, nil)
	clock.waitWaiting(t, 1)
	clock.advance(t0.Add(30 * time.Minute))
	clock.waitWaiting(t, 1) // the retry's wait
	clock.advance(t0.Add(31 * time.Minute))
	if run := rec.next(t); !run.At.Equal(t0.Add(30 * time.Minute)) {
		t.Fatalf("retried run %+v", run)
	}
}

func TestQuietHoursSkip(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 22, 0, 0, 0, time.UTC)
	clock, rec := newClock(t0), newRecorder()
	quiet := func(at time.Time) bool { return at.Hour() >= 23 || at.Hour() < 7 }
	start(t, []Job{{Name: "hb", Every: time.Hour, Quiet: quiet}}, clock, rec, nil)
	for h := 23; h <= 31; h++ { // 23:00 … 07:00
		clock.waitWaiting(t, 1)
		clock.advance(t0.Add(time.Duration(h-22) * time.Hour))
	}
	run := rec.next(t)
	if run.At.Hour() != 7 {
		t.Fatalf("first run at %s, want 07:00 after the quiet hours", run.At)
	}
}

// A one-shot job runs once at its time; one whose time passed while down
// is made up if under an hour late.
func TestOneShot(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	state := newState()
	clock, rec := newClock(t0), newRecorder()
	stop := start(t, []Job{{Name: "once", At: t0.Add(5 * time.Minute), Prompt: "remind"}}, clock, rec, state)
	clock.waitWaiting(t, 1)
	clock.advance(t0.Add(5 * time.Minute))
	if run := rec.next(t); run.Job != "once" || !run.At.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("run %+v", run)
	}
	stop()
	// Another one-shot, due while the host was down.
	clock2, rec2 := newClock(t0.Add(40*time.Minute)), newRecorder()
	stop = start(t, []Job{{Name: "once2", At: t0.Add(20 * time.Minute)}}, clock2, rec2, state)
	stop()
	if len(rec2.runs) != 0 {
		t.Fatalf("a job first seen after its time ran: %+v", rec2.runs)
	}
}

// A one-shot job created before its time (on another host, which died
// before the time came) and first seen by this scheduler after it is made
// up once when under an hour late, and skipped when later; a job created
// after a later run was recorded keeps that run.
func TestOneShotCreatedBeforeItsTime(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		now   time.Time
		state map[string]time.Time
		want  bool
	}{
		{"missed by 10 minutes", t0.Add(15 * time.Minute), nil, true},
		{"missed by two hours", t0.Add(125 * time.Minute), nil, false},
		{"already run (another host)", t0.Add(15 * time.Minute), map[string]time.Time{"once": t0.Add(5 * time.Minute)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state := newState()
			maps.Copy(state.last, c.state)
			clock, rec := newClock(c.now), newRecorder()
			job := Job{Name: "once", At: t0.Add(5 * time.Minute), Since: t0, Prompt: "remind"}
			s := New(Options{Jobs: []Job{job}, Fire: rec.fire, State: state, Clock: clock})
			s.Run(context.Background()) // a past one-shot: returns once handled
			switch {
			case c.want && (len(rec.runs) != 1 || !rec.runs[0].At.Equal(job.At)):
				t.Fatalf("runs %+v; want the one-shot made up once", rec.runs)
			case !c.want && len(rec.runs) != 0:
				t.Fatalf("runs %+v; want none", rec.runs)
			case c.want && !state.get("once").Equal(job.At):
				t.Fatalf("state %v; want the run recorded", state.get("once"))
			}
		})
	}
}

// failingState cannot be read; it counts the records it gets.
type failingState struct{ memState }

func (f *failingState) Runs(context.Context) (map[string]time.Time, error) {
	return nil, errors.New("database unreachable")
}

// A state that cannot be read makes up no run and records no "first
// seen" over the real last run; a run that fires is recorded.
func TestUnreadableStateIsNotOverwritten(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	state := &failingState{memState: *newState()}
	clock, rec := newClock(t0), newRecorder()
	start(t, []Job{{Name: "hb", Every: 30 * time.Minute}}, clock, rec, state)
	clock.waitWaiting(t, 1)
	if state.records != 0 {
		t.Fatalf("%d records before any run; want none", state.records)
	}
	clock.advance(t0.Add(30 * time.Minute))
	rec.next(t)
	clock.waitWaiting(t, 1)
	if got := state.get("hb"); !got.Equal(t0.Add(30 * time.Minute)) {
		t.Fatalf("recorded %s; want the run", got)
	}
}
