package runner

import (
	"time"

	"github.com/clawhost/clawhost/core/internal/procmem"
)

// The pool keeps at most one warm process per conversation key in Runner.procs (guarded by
// Runner.mu). A turn takes its key's process with acquire (busy while the turn runs) and
// gives it back with release. An idle process is stopped after its agent's
// Config.IdleTimeout; beyond Config.MaxWarm processes, or Config.WarmMemory bytes of them,
// the idle ones least worth keeping are stopped (victimLocked). With Config.OneShot the
// pool stays empty: every turn starts a process and release ends it.
//
// What a process holds is measured after its first turn and then after a turn at most once
// per remeasureAfter (measure, measureDelay after the turn, once its answer is out) through
// Runner.meter; one not measured yet counts as the mean of those that are.

// memoryMeter measures a warm process for the Config.WarmMemory budget. The runner's is
// procmem.Tree; tests plant a recording fake (the fake claude is small, the real one
// ≈ 210 MB).
type memoryMeter interface {
	// Memory is what the process tree rooted at pid holds, in bytes; false when it
	// cannot be read (the process ended). Called from its own goroutine after a turn,
	// never under Runner.mu.
	Memory(pid int) (int64, bool)
}

// treeMeter is the runner's memoryMeter: the proportional set size of the process
// and everything below it (bubblewrap, claude, its tools and MCP servers).
type treeMeter struct{}

func (treeMeter) Memory(pid int) (int64, bool) { return procmem.Tree(pid) }

// procMemory stands for the memory of a warm process while none has been measured: the
// real CLI's, measured with claude 2.1.330 (184–210 MB resident).
const procMemory int64 = 210 << 20

// remeasureAfter is how long a warm process's measured memory stands before a turn's end
// measures it again. Reading /proc/<pid>/smaps_rollup makes the kernel walk the whole
// tree's page tables: measured after every turn it was 0.5–0.6 ms of the host's CPU per
// warm turn with the benchmark's small fake claude (BenchmarkOutboundTelegram's profile,
// issue 58: the whole regression against v0.1.0), about 1 ms with the real 200 MB CLI.
// A claude's memory grows with its conversation over minutes, not turns.
const remeasureAfter = time.Minute

// maxUses caps the turns that count for a process's worth (keepValueLocked), so a chat
// that was busy long ago does not squat on a warm process.
const maxUses = 8

// acquire returns the key's warm process when it fits the request, or starts one; a new
// session adopts the agent's spare when it was started for spare (nil: none). It
// records in w how the turn got its process.
func (r *Runner) acquire(req TurnRequest, resume bool, spare *spareID, w *Wait) (p *proc, err *Error) {
	extra := req.ExtraSystemPrompt
	w.Start, w.Warm, w.WarmBusy, w.MaxWarm, w.Evicted = StartOneShot, 0, 0, r.cfg.MaxWarm, ""
	w.Memory, w.WarmMemory = 0, max(r.cfg.WarmMemory, 0)
	if !r.cfg.OneShot {
		var stale []*proc
		r.mu.Lock()
		w.Start = StartCold
		if old := r.procs[req.Key]; old != nil {
			if old.isDead() {
				w.Start = StartDied
			} else if !old.planExited.Load() && old.cfg == r.profile(req.Agent) && old.sessionID == req.SessionID && old.extra == extra && old.model == req.Model && old.effort == req.Effort && old.mode == req.PermissionMode && old.mcp == req.MCPConfig && old.ask == req.AskPermission && old.media == req.MediaDir && old.dir == req.Dir {
				old.busy = true
				old.lastUsed = r.clock.Now()
				if old.idle != nil {
					old.idle.Stop()
				}
				r.mu.Unlock()
				w.Start = StartWarm
				return old, nil
			} else {
				w.Start = StartChanged
			}
			r.removeLocked(old)
			stale = append(stale, old)
		}
		if spare != nil {
			sp, gone := r.adoptSpareLocked(req, *spare)
			if gone != nil {
				stale = append(stale, gone)
			}
			if sp != nil {
				r.mu.Unlock()
				for _, s := range stale {
					r.stopAsync(s)
				}
				w.Start = StartSpare
				return sp, nil
			}
		}
		w.Warm = len(r.procs)
		for _, q := range r.procs {
			if q.busy {
				w.WarmBusy++
			}
		}
		w.Memory = r.memoryOfLocked(nil)
		// Make room: count the process about to start.
		evicted := r.evictLocked(r.profile(req.Agent), true)
		if len(evicted) > 0 {
			w.Evicted = evicted[0].key
		}
		r.mu.Unlock()
		for _, e := range evicted {
			// Said before the start: a recycled sandbox's pool starts no spare for
			// the one an evicted claude gives back right after.
			ending(e)
		}
		for _, s := range stale {
			r.stopAsync(s)
		}
		// The evicted are stopped once the new process runs: their end (stdin closed,
		// the exit, the reap) would share the CPU with this start. They left the pool
		// above, so the budget counts the new process in their place already.
		defer r.stopEvicted(evicted)
	}
	p, err = r.start(req.Key, req.SessionID, resume, extra, launch{cfg: r.profile(req.Agent), dir: req.Dir, model: req.Model, effort: req.Effort, mode: req.PermissionMode, mcp: req.MCPConfig, tools: req.Tools, ask: req.AskPermission && !r.cfg.OneShot, media: req.MediaDir})
	if err != nil {
		return nil, err
	}
	if !r.cfg.OneShot {
		r.mu.Lock()
		p.busy = true
		p.lastUsed = r.clock.Now()
		r.procs[req.Key] = p
		r.mu.Unlock()
	}
	return p, nil
}

// release returns a warm process to the pool (keep) or ends it.
func (r *Runner) release(p *proc, keep bool) {
	if r.cfg.OneShot {
		// The process exits after its result; make sure it does.
		r.stopAsync(p)
		return
	}
	r.mu.Lock()
	p.busy = false
	p.lastUsed = r.clock.Now()
	if !keep || p.isDead() || r.closed || r.procs[p.key] != p {
		if r.procs[p.key] == p {
			r.removeLocked(p)
		}
		r.mu.Unlock()
		r.stopAsync(p)
		return
	}
	p.uses++
	p.prio = r.keepValueLocked(p)
	r.armIdleLocked(p)
	evict := r.evictLocked(p.cfg, false)
	due := r.meter != nil && r.measureDueLocked(p)
	r.mu.Unlock()
	r.stopEvicted(evict)
	if due {
		r.measureLater(p)
	}
}

// measureLater measures p measureAfter from now, on a goroutine Close waits for (or
// drops when it comes first). The caller holds r.wg (a turn's goroutine, a spare's
// start), so Close cannot be waiting with the count at zero.
func (r *Runner) measureLater(p *proc) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if r.measureAfter > 0 {
			tm, fired := r.clock.NewTimer(r.measureAfter)
			defer tm.Stop()
			select {
			case <-fired:
			case <-r.quit:
				return
			}
		}
		r.measure(p)
	}()
}

// measureDelay is how long after the turn that made it warm, or the one that found its
// measure stale, a process is measured: once its answer is out. Measured at once, on the
// one processor the host runs its Go code on while lightly loaded (core/internal/procpace),
// the goroutine ran before the turn's answer went on, and the kernel's walk of the
// process's page tables delayed the answer: 0.28 ms with the benchmark's fake claude
// (BenchmarkFirstTurnTelegram, traced), about 1 ms with the real CLI. Until then the
// process counts as the others' mean (estimateLocked).
const measureDelay = 2 * time.Second

// measureDueLocked tells whether p's turn that just ended measures it (remeasureAfter)
// and, when it does, notes that it was.
func (r *Runner) measureDueLocked(p *proc) bool {
	now := r.clock.Now()
	if at, ok := r.measuredAt[p]; ok && now.Sub(at) < remeasureAfter {
		return false
	}
	if r.measuredAt == nil {
		r.measuredAt = map[*proc]time.Time{}
	}
	r.measuredAt[p] = now
	return true
}

// measure reads what p holds now (Runner.meter) and, if the warm processes no longer fit
// Config.WarmMemory with it, stops the idle ones least worth keeping until they do — p
// itself when it is that one. A turn's answer never waits for it (measureDelay): reading
// smaps of a 200 MB process takes about a millisecond.
func (r *Runner) measure(p *proc) { r.stopEvicted(r.measured(p)) }

// measured records p's memory from the meter and returns the processes evicted to fit
// the budget with it.
func (r *Runner) measured(p *proc) []*proc {
	r.mu.Lock()
	gone := r.procs[p.key] != p
	r.mu.Unlock()
	if gone {
		return nil // stopped meanwhile (evicted, idle, its chat reset): no walk of its tree
	}
	m, ok := r.meter.Memory(p.pid)
	if !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.procs[p.key] != p {
		return nil
	}
	p.mem = m
	return r.evictLocked(p.cfg, false)
}

// memoryOfLocked is what the warm processes of the agent configured by of (every
// agent's when nil) hold: each one's measured memory, the estimate for one not measured.
func (r *Runner) memoryOfLocked(of *Config) int64 {
	est := r.estimateLocked()
	var sum int64
	for _, p := range r.procs {
		if of != nil && p.cfg.Name != of.Name {
			continue
		}
		if p.mem > 0 {
			sum += p.mem
		} else {
			sum += est
		}
	}
	return sum
}

// estimateLocked is the memory a warm process not measured yet is counted with: the mean
// of the measured ones, Runner.unmeasured (procMemory) while there is none.
func (r *Runner) estimateLocked() int64 {
	var sum, n int64
	for _, p := range r.procs {
		if p.mem > 0 {
			sum, n = sum+p.mem, n+1
		}
	}
	if n == 0 {
		return r.unmeasured
	}
	return sum / n
}

// keepValueLocked is p's worth to the pool after a turn, GreedyDual-Size-Frequency
// (Cherkasova, 1998) with every process the same size: the start a later turn would
// save (p's own start time) times how often p is used (its turns, at most maxUses), on
// top of r.inflation. The pool evicts the least worth and raises r.inflation to it, so
// the worth of a process that is not used again falls behind that of processes used
// since: old worth ages out, as in LRU, but a process that is used often or costly to
// start outlasts one that ran a single cheap turn.
func (r *Runner) keepValueLocked(p *proc) float64 {
	return r.inflation + float64(min(p.uses, maxUses))*p.startCost().Seconds()
}

// stopEvicted stops processes evictLocked removed.
func (r *Runner) stopEvicted(evicted []*proc) {
	for _, e := range evicted {
		r.log.Debug("stopping a warm claude process to make room", "key", e.key, "pid", e.pid, "uses", e.uses)
		r.stopAsync(e)
	}
}

// armIdleLocked stops p after its agent's Config.IdleTimeout unless it ran a turn
// meanwhile.
func (r *Runner) armIdleLocked(p *proc) {
	uses := p.uses
	p.idle = r.clock.AfterFunc(p.cfg.IdleTimeout, func() {
		r.mu.Lock()
		if r.procs[p.key] != p || p.busy || p.uses != uses {
			r.mu.Unlock()
			return
		}
		r.removeLocked(p)
		r.mu.Unlock()
		r.log.Debug("stopping idle claude process", "key", p.key, "pid", p.pid)
		r.stopAsync(p)
	})
}

// evictLocked removes idle processes, the least worth keeping first (victimLocked), while
// agent's warm processes exceed its MaxWarm or WarmMemory, then while all agents' exceed
// the runner's, and returns them for the caller to stop (after unlocking). With room, the
// limits keep room for one more process (about to start, counted with estimateLocked).
// Busy processes are never evicted: a process just started runs its turn first, and
// when the busy ones alone exceed a limit the pool holds more until they are idle.
func (r *Runner) evictLocked(agent *Config, room bool) []*proc {
	add, addMem := 0, int64(0)
	if room {
		add, addMem = 1, r.estimateLocked()
	}
	var out []*proc
	evict := func(of, limits *Config) {
		for {
			n := len(r.procs)
			if of != nil {
				n = r.warmOfLocked(of)
			}
			over := limits.MaxWarm > 0 && n+add > limits.MaxWarm ||
				limits.WarmMemory > 0 && n > 0 && r.memoryOfLocked(of)+addMem > limits.WarmMemory
			if !over {
				return
			}
			v := r.victimLocked(of)
			if v == nil {
				return
			}
			r.removeLocked(v)
			r.inflation = max(r.inflation, v.prio)
			out = append(out, v)
		}
	}
	if len(r.agents) > 0 {
		evict(agent, agent)
	}
	evict(nil, &r.cfg)
	return out
}

// warmOfLocked counts the warm processes of the agent configured by c (by name: a
// process started before an Update holds the profile it was started with).
func (r *Runner) warmOfLocked(c *Config) int {
	n := 0
	for _, p := range r.procs {
		if p.cfg.Name == c.Name {
			n++
		}
	}
	return n
}

// victimLocked is the idle process to evict (of the agent configured by of, any agent's
// when nil), or nil when all are busy: one whose key has no turn queued if there is such
// a process (a queued turn is about to use its own), the least worth (prio) among those,
// the least recently used on a tie.
func (r *Runner) victimLocked(of *Config) *proc {
	var v *proc
	vWanted := false
	for _, p := range r.procs {
		if p.busy || of != nil && p.cfg.Name != of.Name {
			continue
		}
		wanted := len(r.lanes[p.key]) > 0
		switch {
		case v == nil, vWanted && !wanted:
		case wanted && !vWanted, p.prio > v.prio, p.prio == v.prio && !p.lastUsed.Before(v.lastUsed):
			continue
		}
		v, vWanted = p, wanted
	}
	return v
}

// removeLocked drops p from the pool (if it is still its key's process) and its idle timer.
func (r *Runner) removeLocked(p *proc) {
	if r.procs[p.key] == p {
		delete(r.procs, p.key)
	}
	delete(r.measuredAt, p)
	if p.idle != nil {
		p.idle.Stop()
	}
}

// Stop stops key's warm process, if any, without waiting (e.g. after /new). A running turn
// is not affected; use Abort.
func (r *Runner) Stop(key string) {
	r.mu.Lock()
	p := r.procs[key]
	if p != nil && !p.busy {
		r.removeLocked(p)
	} else {
		p = nil
	}
	r.mu.Unlock()
	if p != nil {
		r.stopAsync(p)
	}
}

// Warm returns the keys with a live warm process and their pids.
func (r *Runner) Warm() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.procs))
	for k, p := range r.procs {
		if p.spare != nil {
			continue // no conversation's (Pool counts it)
		}
		out[k] = p.run.ClaudePID()
	}
	return out
}
