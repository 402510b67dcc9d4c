package runner

import (
	"time"
)

// The pool keeps at most one warm process per conversation key in Runner.procs (guarded by
// Runner.mu). A turn takes its key's process with acquire (busy while the turn runs) and
// gives it back with release. An idle process is stopped after Config.IdleTimeout; beyond
// Config.MaxWarm the least recently used idle one is stopped. With Config.OneShot the pool
// stays empty: every turn starts a process and release ends it.

// acquire returns the key's warm process when it fits the request, or starts one.
func (r *Runner) acquire(req TurnRequest, resume bool) (p *proc, reused bool, err *Error) {
	extra := req.ExtraSystemPrompt
	if !r.cfg.OneShot {
		var stale []*proc
		r.mu.Lock()
		if old := r.procs[req.Key]; old != nil {
			if old.sessionID == req.SessionID && old.extra == extra && old.model == req.Model && old.effort == req.Effort && old.mode == req.PermissionMode && old.mcp == req.MCPConfig && old.ask == req.AskPermission && !old.isDead() {
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
		stale = append(stale, r.evictLocked(r.cfg.MaxWarm-1)...)
		r.mu.Unlock()
		for _, s := range stale {
			r.stopAsync(s)
		}
	}
	p, err = r.start(req.Key, req.SessionID, resume, extra, launch{model: req.Model, effort: req.Effort, mode: req.PermissionMode, mcp: req.MCPConfig, tools: req.Tools, ask: req.AskPermission && !r.cfg.OneShot})
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
	r.armIdleLocked(p)
	evict := r.evictLocked(r.cfg.MaxWarm)
	r.mu.Unlock()
	for _, e := range evict {
		r.log.Debug("stopping least recently used claude process", "key", e.key, "pid", e.pid)
		r.stopAsync(e)
	}
}

// armIdleLocked stops p after Config.IdleTimeout unless it ran a turn meanwhile.
func (r *Runner) armIdleLocked(p *proc) {
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
}

// evictLocked removes least recently used idle processes while more than keep are warm
// and returns them for the caller to stop (after unlocking).
func (r *Runner) evictLocked(keep int) []*proc {
	var out []*proc
	for len(r.procs) > keep {
		lru := r.lruIdleLocked()
		if lru == nil {
			break
		}
		r.removeLocked(lru)
		out = append(out, lru)
	}
	return out
}

// lruIdleLocked is the least recently used process not running a turn, or nil.
func (r *Runner) lruIdleLocked() *proc {
	var lru *proc
	for _, p := range r.procs {
		if !p.busy && (lru == nil || p.lastUsed.Before(lru.lastUsed)) {
			lru = p
		}
	}
	return lru
}

// removeLocked drops p from the pool (if it is still its key's process) and its idle timer.
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
