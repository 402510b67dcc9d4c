//go:build linux

package sandbox

import (
	"cmp"
	"slices"
	"time"
)

// zygoteIdleRelease is how long an agent starts no claude before the pool stops its idle
// sandboxes. Each is two processes (bwrap and the helper) and about 5.6 MB resident; an
// agent keeps up to Config.MaxConcurrent of them (zygoteSpares) for the starts to come,
// and after a busy hour an idle host kept them all for good: four agents' worth by
// default, more than the host itself. An agent quiet this long has no start to make soon;
// its next start pays a helper's start (bubblewrap's exec and the helper's own, tens of
// milliseconds) beside claude's own, and the pool fills again from there.
const zygoteIdleRelease = 5 * time.Minute

// startedNow records a start of k's (get; mu held).
func (zp *Pool) startedNow(k zygoteKey) { zp.lastStart[k] = zp.clock.Now() }

// armRelease arms the idle release once a sandbox went idle (mu held): a timer while any
// is idle, none once none is.
func (zp *Pool) armRelease() {
	if zp.release == nil && !zp.closed {
		zp.release = zp.clock.AfterFunc(zygoteIdleRelease, zp.releaseIdle)
	}
}

// releaseIdle is the idle release's timer: it stops the idle sandboxes of every agent that
// started no claude for zygoteIdleRelease, and waits again for the others'.
func (zp *Pool) releaseIdle() {
	zp.mu.Lock()
	zp.release = nil
	if zp.closed {
		zp.mu.Unlock()
		return
	}
	expired, next := expiredIdle(zp.idle, zp.lastStart, zp.clock.Now(), zygoteIdleRelease)
	var stop []*zygote
	for _, k := range expired {
		stop = append(stop, zp.idle[k]...)
		delete(zp.idle, k)
	}
	if next > 0 {
		zp.release = zp.clock.AfterFunc(next, zp.releaseIdle)
	}
	zp.mu.Unlock()
	for _, z := range stop {
		zp.goWork(z.stop)
	}
	if len(stop) > 0 {
		zp.log.Debug("stopped idle sandboxes: no claude started for a while", "sandboxes", len(stop), "after", zygoteIdleRelease)
	}
}

// expiredIdle splits the keys with idle sandboxes: those whose last start (last; none:
// never) is d or more before now, sorted, and how long until the first of the others is
// (0: none is left).
func expiredIdle(idle map[zygoteKey][]*zygote, last map[zygoteKey]time.Time, now time.Time, d time.Duration) (expired []zygoteKey, next time.Duration) {
	for k, q := range idle {
		if len(q) == 0 {
			continue
		}
		left := last[k].Add(d).Sub(now)
		if left <= 0 {
			expired = append(expired, k)
			continue
		}
		if next == 0 || left < next {
			next = left
		}
	}
	slices.SortFunc(expired, func(a, b zygoteKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.uid, b.uid))
	})
	return expired, next
}
