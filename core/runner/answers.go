package runner

import (
	"slices"
	"sync"
	"time"
)

// answerWindow is how many of the latest returning turns of each kind answerTimes keeps.
const answerWindow = 256

// answerTimes keeps the time to first answer of a returning chat's turns (a turn of a
// session that ran before: TurnRequest.NewSession false), those run by the chat's warm
// process apart from those that started one: what the warm pool saves (Runner.Pool).
type answerTimes struct {
	mu         sync.Mutex
	warm, cold answerRing
}

// answerRing is the latest answerWindow durations and how many were ever recorded.
type answerRing struct {
	d     []time.Duration
	next  int
	total int
}

func (a *answerRing) add(d time.Duration) {
	if len(a.d) < answerWindow {
		a.d = append(a.d, d)
	} else {
		a.d[a.next] = d
	}
	a.next = (a.next + 1) % answerWindow
	a.total++
}

// record counts a returning turn that ended with res, began (Run) at began and wrote its
// first assistant text at text (zero: none, the answer is the result, now). A failed or
// stopped turn is left out: it answered nothing.
func (a *answerTimes) record(res Result, text, began time.Time) {
	if res.Err != nil || res.Wait.Start == "" {
		return
	}
	if text.IsZero() {
		text = time.Now()
	}
	d := max(text.Sub(began), 0)
	a.mu.Lock()
	defer a.mu.Unlock()
	if res.Wait.Start == StartWarm {
		a.warm.add(d)
	} else {
		a.cold.add(d)
	}
}

// Latency is the time to first answer over a window of turns.
type Latency struct {
	// Turns is how many turns were counted since the start; the percentiles are over
	// the latest 256 of them. 0: none (the percentiles are 0).
	Turns    int
	P50, P90 time.Duration
}

func (a *answerRing) latency() Latency {
	l := Latency{Turns: a.total}
	if len(a.d) == 0 {
		return l
	}
	s := slices.Clone(a.d)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[int(p*float64(len(s)-1)+0.5)] }
	l.P50, l.P90 = at(0.5), at(0.9)
	return l
}

func (a *answerTimes) summary() (warm, cold Latency) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.warm.latency(), a.cold.latency()
}

// Pool is the warm pool's state, for the status page: its limits, what its processes
// hold, and the time to first answer of returning chats with and without a warm process.
type Pool struct {
	// Warm is the number of warm processes; Measured how many of them have been
	// measured (Memory counts the others at the mean of those).
	Warm, Measured int
	// MaxWarm is Config.MaxWarm (0: no limit by count); WarmMemory the budget in bytes
	// (0: none); Memory what the warm processes hold, in bytes.
	MaxWarm            int
	WarmMemory, Memory int64
	// FirstAnswerWarm and FirstAnswerCold are, for turns of a chat that had run before,
	// Run → the first assistant text read from claude (the result when it wrote no text
	// before it): on the chat's warm process, and where a process had to be started
	// (evicted, idle-stopped, settings changed, the host restarted). Failed turns are
	// left out.
	FirstAnswerWarm, FirstAnswerCold Latency
	// Spares is how many of Warm are agents' spare claudes, started ahead for a new
	// session (Config.Spare); SparesStarted and SparesAdopted count those started and
	// those a new session adopted since the runner started.
	Spares, SparesStarted, SparesAdopted int
	// SpareError is why the latest spare could not be started or adopted ("" once one
	// started since): new sessions start their own claude meanwhile.
	SpareError string
}

// Pool reports the warm pool's state.
func (r *Runner) Pool() Pool {
	r.mu.Lock()
	p := Pool{Warm: len(r.procs), MaxWarm: r.cfg.MaxWarm, WarmMemory: max(r.cfg.WarmMemory, 0), Memory: r.memoryOfLocked(nil)}
	for _, q := range r.procs {
		if q.mem > 0 {
			p.Measured++
		}
		if q.spare != nil {
			p.Spares++
		}
	}
	p.SparesStarted, p.SparesAdopted, p.SpareError = r.spares.started, r.spares.adopted, r.spares.failed
	r.mu.Unlock()
	p.FirstAnswerWarm, p.FirstAnswerCold = r.answers.summary()
	return p
}
