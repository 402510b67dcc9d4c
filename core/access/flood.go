package access

import (
	"sync"
	"time"
)

// Flood is the per-sender flood limit (access.rate): a token bucket per
// sender holding up to N messages, refilled at N a window. Kept in memory:
// a restart forgets the buckets (every sender starts full).
type Flood struct {
	n   int
	per time.Duration
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
	// told is when the sender was last told they are over the limit.
	told time.Time
}

// maxBuckets bounds the map; past it, full buckets are forgotten (they
// hold nothing a new bucket would not).
const maxBuckets = 10000

// NewFlood returns a flood limit of n messages per window; now is the
// clock (nil: time.Now). A nil *Flood allows everything.
func NewFlood(n int, per time.Duration, now func() time.Time) *Flood {
	if now == nil {
		now = time.Now
	}
	return &Flood{n: n, per: per, now: now, buckets: map[string]*bucket{}}
}

// Allow takes one message of sender's from the bucket. When the bucket is
// empty it reports false, and tell says whether the sender is to be told
// (once a window).
func (f *Flood) Allow(sender string) (ok, tell bool) {
	if f == nil || f.n <= 0 {
		return true, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	b := f.buckets[sender]
	if b == nil {
		if len(f.buckets) >= maxBuckets {
			f.forgetFull(now)
		}
		b = &bucket{tokens: float64(f.n), at: now}
		f.buckets[sender] = b
	}
	b.refill(now, f.n, f.per)
	if b.tokens >= 1 {
		b.tokens--
		return true, false
	}
	if !b.told.IsZero() && now.Sub(b.told) < f.per {
		return false, false
	}
	b.told = now
	return false, true
}

func (b *bucket) refill(now time.Time, n int, per time.Duration) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(n), b.tokens+float64(n)*d.Seconds()/per.Seconds())
		b.at = now
	}
}

func (f *Flood) forgetFull(now time.Time) {
	for k, b := range f.buckets {
		b.refill(now, f.n, f.per)
		if b.tokens >= float64(f.n) {
			delete(f.buckets, k)
		}
	}
}
