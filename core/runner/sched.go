package runner

import (
	"slices"
	"time"
)

// The scheduler decides when a turn runs. It owns both rules, under Runner.mu: the turns
// of one key run one at a time in Run order (a lane), and at most Config.MaxConcurrent
// run at once (slots). A turn is a ticket: queued behind its key's earlier turns, then
// waiting for a slot once it heads its lane, then running. A ticket leaves when its turn
// ends, however it ends; that frees its slot and makes the key's next turn wait for one
// in the same step, so the scheduler sees that turn next to the process it just left
// idle (see pickLocked and the package documentation).

// warmBonusStarts and maxWarmBonus bound the preference for a turn whose key has an idle
// warm process: it ranks as if it had begun to wait warmBonusStarts × that process's
// start time earlier, at most maxWarmBonus earlier.
const (
	warmBonusStarts = 4
	maxWarmBonus    = 30 * time.Second
)

// defaultStartup stands for the start time of a process that has not written yet.
const defaultStartup = time.Second

type ticketState int

const (
	ticketQueued  ticketState = iota // behind an earlier turn of its key
	ticketWaiting                    // heads its lane, waits for a slot
	ticketRunning                    // holds a slot
	ticketGone                       // ended
)

// ticket is one turn in the scheduler (fields guarded by Runner.mu).
type ticket struct {
	key   string
	turn  *Turn
	ready chan struct{} // closed when the turn holds a slot
	state ticketState
	// queued is Run's time, eligible when it began to wait for a slot (running and
	// ahead were then running and waiting), granted when it got one.
	queued, eligible, granted time.Time
	running, ahead            int
}

// enqueueLocked adds a turn of key behind the key's earlier turns.
func (r *Runner) enqueueLocked(key string, t *Turn) *ticket {
	tk := &ticket{key: key, turn: t, ready: make(chan struct{}), queued: r.clock.Now()}
	r.lanes[key] = append(r.lanes[key], tk)
	if len(r.lanes[key]) == 1 {
		r.eligibleLocked(tk)
		r.grantLocked()
	}
	return tk
}

// eligibleLocked makes tk, now heading its lane, wait for a slot. From here Abort finds
// it (a turn waiting for a slot is the key's current turn).
func (r *Runner) eligibleLocked(tk *ticket) {
	tk.state = ticketWaiting
	tk.eligible = r.clock.Now()
	tk.running, tk.ahead = r.running, len(r.waiting)
	r.waiting = append(r.waiting, tk)
	r.active[tk.key] = tk.turn
}

// grantLocked gives free slots to waiting turns, best first (pickLocked).
func (r *Runner) grantLocked() {
	for r.running < r.cfg.MaxConcurrent && len(r.waiting) > 0 {
		i := r.pickLocked()
		tk := r.waiting[i]
		r.waiting = slices.Delete(r.waiting, i, i+1)
		tk.state = ticketRunning
		tk.granted = r.clock.Now()
		r.running++
		close(tk.ready)
	}
}

// pickLocked is the index in r.waiting of the turn to run next: the one that began to
// wait first, where a turn whose key has an idle warm process counts as having begun
// warmBonus earlier. A turn is thus never overtaken by one that began to wait more than
// maxWarmBonus after it: no turn starves, and a start is saved only where the others
// lose little. Ties go to the earlier (r.waiting is in eligible order).
func (r *Runner) pickLocked() int {
	best := 0
	var bestRank time.Time
	for i, tk := range r.waiting {
		rank := tk.eligible.Add(-r.warmBonusLocked(tk.key))
		if i == 0 || rank.Before(bestRank) {
			best, bestRank = i, rank
		}
	}
	return best
}

// warmBonusLocked is how much earlier a waiting turn of key ranks because the key has an
// idle warm process: warmBonusStarts of its start time, at most maxWarmBonus; 0 without one.
func (r *Runner) warmBonusLocked(key string) time.Duration {
	p := r.procs[key]
	if p == nil || p.busy || p.isDead() {
		return 0
	}
	return min(warmBonusStarts*p.startCost(), maxWarmBonus)
}

// leave takes tk out of the scheduler when its turn ends (ran, or stopped while waiting):
// its slot goes to the best waiting turn, and the next turn of its key, if any, begins
// to wait for one in the same step.
func (r *Runner) leave(tk *ticket) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch tk.state {
	case ticketGone:
		return
	case ticketWaiting:
		r.waiting = slices.DeleteFunc(r.waiting, func(w *ticket) bool { return w == tk })
	}
	held := tk.state == ticketRunning
	tk.state = ticketGone
	if r.active[tk.key] == tk.turn {
		delete(r.active, tk.key)
	}
	lane := r.lanes[tk.key]
	head := len(lane) > 0 && lane[0] == tk
	lane = slices.DeleteFunc(lane, func(w *ticket) bool { return w == tk })
	if len(lane) == 0 {
		delete(r.lanes, tk.key)
	} else {
		r.lanes[tk.key] = lane
		if head {
			r.eligibleLocked(lane[0]) // counting tk as running still: it was, until now
		}
	}
	if held {
		r.running--
	}
	r.grantLocked()
}

// waitTurn blocks until tk holds a slot or the turn ends early (ok false, with res).
func (r *Runner) waitTurn(st stopper, tk *ticket) (w Wait, res Result, ok bool) {
	kind := st.wait(tk.ready)
	if kind != "" {
		// Stopped while queued or waiting (or just as its slot came: leave frees it).
		r.mu.Lock()
		previous := tk.state == ticketQueued
		r.mu.Unlock()
		switch {
		case kind == KindTimeout && previous:
			return w, stoppedResult(kind, "timed out waiting for the previous turn of this conversation"), false
		case kind == KindTimeout:
			return w, stoppedResult(kind, "timed out waiting for a free slot (agent.max_concurrent)"), false
		case previous:
			return w, stoppedResult(kind, "stopped while waiting for the previous turn"), false
		}
		return w, stoppedResult(kind, "stopped while waiting for a free slot"), false
	}
	// Running: tk's times and counts are final (set before ready was closed).
	return Wait{Previous: tk.eligible.Sub(tk.queued), Slot: tk.granted.Sub(tk.eligible), Running: tk.running, Ahead: tk.ahead, Slots: r.cfg.MaxConcurrent}, Result{}, true
}
