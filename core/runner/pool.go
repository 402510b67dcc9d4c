package runner

import (
	"time"
)

// acquire returns the key's warm process when it fits the request, or starts one.
func (r *Runner) acquire(req TurnRequest, resume bool) (p *proc, reused bool, err *Error) {
	extra := req.ExtraSystemPrompt
	if !r.cfg.OneShot {
		var stale []*proc
		r.mu.Lock()
		if old := r.procs[req.Key]; old != nil {
			if old.sessionID == req.SessionID && old.extra == extra && !old.isDead() {
				old.busy = true
				old.lastUsed = time.Now()
				if old.idle != nil {
					old.idle.Stop()
				}
				r.mu.Unlock()
				return old, true, nil
			}
			r.removeLocked(old)
			stale = append(stale, old)
		}
		// Make room: count the process about to start.
		for len(r.procs) >= r.cfg.MaxWarm {
			lru := r.lruIdleLocked()
			if lru == nil {
				break
			}
			r.removeLocked(lru)
			stale = append(stale, lru)
		}
		r.mu.Unlock()
		for _, s := range stale {
			r.stopAsync(s)
		}
	}
	p, err = r.start(req.Key, req.SessionID, resume, extra)
	if err != nil {
		return nil, false, err
	}
	if !r.cfg.OneShot {
		r.mu.Lock()
		p.busy = true
		r.procs[req.Key] = p
		r.mu.Unlock()
	}
	return p, false, nil
}

// release returns a warm process to the pool (keep) or ends it.
func (r *Runner) release(p *proc, keep bool) {
	if r.cfg.OneShot {
		// The process exits after its result; make sure it does.
		r.stopAsync(p)
		return
	}
	var evict []*proc
	r.mu.Lock()
	p.busy = false
	p.lastUsed = time.Now()
	if !keep || p.isDead() || r.closed || r.procs[p.key] != p {
		if r.procs[p.key] == p {
			r.removeLocked(p)
		}
		r.mu.Unlock()
		r.stopAsync(p)
		return
	}
	used := p.lastUsed
	p.idle = time.AfterFunc(r.cfg.IdleTimeout, func() {
		r.mu.Lock()
		if r.procs[p.key] != p || p.busy || !p.lastUsed.Equal(used) {
			r.mu.Unlock()
			return
		}
		r.removeLocked(p)
		r.mu.Unlock()
		r.log.Debug("stopping idle claude process", "key", p.key, "pid", p.pid)
		r.stopAsync(p)
	})
	for len(r.procs) > r.cfg.MaxWarm {
		lru := r.lruIdleLocked()
		if lru == nil {
			break
		}
		r.removeLocked(lru)
		evict = append(evict, lru)
	}
	r.mu.Unlock()
	for _, e := range evict {
		r.log.Debug("stopping least recently used claude process", "key", e.key, "pid", e.pid)
		r.stopAsync(e)
	}
}

func (r *Runner) lruIdleLocked() *proc {
	var lru *proc
	for _, p := range r.procs {
		if !p.busy && (lru == nil || p.lastUsed.Before(lru.lastUsed)) {
			lru = p
		}
	}
	return lru
}

func (r *Runner) removeLocked(p *proc) {
	if r.procs[p.key] == p {
		delete(r.procs, p.key)
	}
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
		out[k] = p.pid
	}
	return out
}
