// Package usagelimit is the host's pause for claude's usage limit. When a
// turn hits the limit (runner.KindUsageLimit, with the reset time claude
// reported; runner.KindRateLimited, without one) the pipeline parks the
// turn's entries in the journal (store.Journal.Park) and pauses: no turn
// starts until the reset (or, without one, a backoff of 1 min doubling to
// 30 min), each chat whose turn would start is told once, schedules and
// heartbeats wait. At the end of the pause — its timer, or an owner's
// /resume — the parked entries go back to their sessions' queues, ahead
// of what queued behind them, and every session with queued entries is
// looked at again: each message runs once, in order.
//
// The pause is a lease in the store ("pause/usage-limit", expiring at the
// reset): it survives a restart (a pause whose end passed while the host
// was down ends at start-up), and the hosts sharing a PostgreSQL store
// see it.
package usagelimit

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/store"
)

// LeaseName is the store lease that holds a pause; its Info says why.
const LeaseName = "pause/usage-limit"

// holder is the lease's holder: the same for every host, so any host
// extends or ends the one pause.
const holder = "usage-limit"

// Backoff bounds, for a limit without a reset time.
const (
	FirstBackoff = time.Minute
	MaxBackoff   = 30 * time.Minute
)

// Store is what the pause keeps in the store.
type Store interface {
	AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error)
	ReleaseLease(ctx context.Context, name, holder string) error
	ListLeases(ctx context.Context, prefix string) ([]store.Lease, error)
	Unpark(ctx context.Context) ([]string, error)
	PendingCounts(ctx context.Context) (map[string]int, error)
}

// Options configure a Pause.
type Options struct {
	Store  Store
	Clock  tstime.Clock
	Logger hclog.Logger
	// Resume is called when a pause ends with the sessions to look at
	// again: those whose parked entries went back to their queues, then
	// those with queued entries.
	Resume func(keys []string)
}

// Pause is the host's usage-limit pause. Safe for concurrent use.
type Pause struct {
	opts Options
	log  hclog.Logger

	mu      sync.Mutex
	until   time.Time // zero: not paused
	reason  string
	told    map[string]bool
	timer   tstime.Timer
	backoff time.Duration
	closed  bool

	// released: a pause ended in this process (see Released).
	released atomic.Bool
}

// New returns a Pause that is not paused; Start reads the store's.
func New(opts Options) *Pause {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Clock == nil {
		opts.Clock = tstime.Std{}
	}
	if opts.Resume == nil {
		opts.Resume = func([]string) {}
	}
	return &Pause{opts: opts, log: opts.Logger.Named("usagelimit"), told: map[string]bool{}}
}

// Start takes up the pause the store holds (a restart, another host's):
// it ends at its time. A pause whose end has passed, or entries parked
// without one, end at once.
func (p *Pause) Start(ctx context.Context) error {
	leases, err := p.opts.Store.ListLeases(ctx, LeaseName)
	if err != nil {
		return err
	}
	now := p.opts.Clock.Now()
	for _, l := range leases {
		if l.Name == LeaseName && l.Live(now) {
			var info leaseInfo
			if json.Unmarshal([]byte(l.Info), &info) != nil {
				info.Reason = l.Info
			}
			p.mu.Lock()
			p.until, p.reason = l.Expires, info.Reason
			for _, k := range info.Told {
				p.told[k] = true
			}
			p.arm()
			p.mu.Unlock()
			p.log.Warn("claude's usage limit pauses the turns (from before the restart)", "until", l.Expires, "reason", info.Reason)
			return nil
		}
	}
	p.resume(ctx, "no pause")
	return nil
}

// Hit pauses the turns until reset (zero: the backoff, which doubles at
// each hit without a reset until a turn gets through, see OK), and
// returns when the pause ends. A pause already running is extended, never
// shortened.
func (p *Pause) Hit(ctx context.Context, reset time.Time, reason string) time.Time {
	now := p.opts.Clock.Now()
	p.mu.Lock()
	until := reset
	if until.IsZero() || !until.After(now) {
		p.backoff = min(max(p.backoff*2, FirstBackoff), MaxBackoff)
		until = now.Add(p.backoff)
	}
	if p.until.After(until) {
		until = p.until
	}
	first := p.until.IsZero()
	p.until, p.reason = until, reason
	p.arm()
	p.mu.Unlock()
	p.store(ctx)
	if first {
		p.log.Warn("claude's usage limit: turns are paused", "until", until, "reason", reason)
	}
	return until
}

// leaseInfo is the lease's Info: why, and the sessions told.
type leaseInfo struct {
	Reason string   `json:"reason"`
	Told   []string `json:"told,omitempty"`
}

// store writes the pause as the lease: until its end, with why and whom
// it told, so a restart neither forgets it nor tells a chat twice.
func (p *Pause) store(ctx context.Context) {
	p.mu.Lock()
	until := p.until
	info := leaseInfo{Reason: p.reason}
	for k := range p.told {
		info.Told = append(info.Told, k)
	}
	p.mu.Unlock()
	if until.IsZero() {
		return
	}
	slices.Sort(info.Told)
	b, _ := json.Marshal(info)
	ttl := until.Sub(p.opts.Clock.Now())
	if ttl <= 0 {
		return
	}
	if _, err := p.opts.Store.AcquireLease(ctx, store.LeaseRequest{Name: LeaseName, Holder: holder, TTL: ttl, Info: string(b)}); err != nil {
		p.log.Error("storing the usage-limit pause failed; a restart would not know it", "error", err)
	}
}

// arm sets the timer for the pause's end (p.mu held).
func (p *Pause) arm() {
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.closed {
		return
	}
	until := p.until
	p.timer = p.opts.Clock.AfterFunc(until.Sub(p.opts.Clock.Now()), func() {
		p.mu.Lock()
		due := p.until.Equal(until)
		p.mu.Unlock()
		if due {
			p.resume(context.Background(), "reset")
		}
	})
}

// Paused returns when the pause ends and why, ok false when the turns
// are not paused.
func (p *Pause) Paused() (until time.Time, reason string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.until, p.reason, !p.until.IsZero()
}

// Tell reports whether session key is yet to be told of this pause, and
// marks it told (in the store too): each chat hears of a pause once, also
// across a restart.
func (p *Pause) Tell(key string) bool {
	p.mu.Lock()
	if p.told[key] {
		p.mu.Unlock()
		return false
	}
	p.told[key] = true
	p.mu.Unlock()
	p.store(context.Background())
	return true
}

// Released reports whether a pause has ended in this process (its timer
// or /resume; not the one Start ends before any lane runs). A lane that
// read its session's queue during a pause, when the parked entries were
// not in it, may start a newer message after the pause ended and the
// parked ones went back ahead of it: once this is true a turn checks
// that no older entry waits in its session's queue before it starts.
func (p *Pause) Released() bool { return p.released.Load() }

// OK records that a turn got through: the next limit without a reset
// backs off from the start.
func (p *Pause) OK() {
	p.mu.Lock()
	p.backoff = 0
	p.mu.Unlock()
}

// Resume ends the pause now (an owner's /resume); it reports whether the
// turns were paused.
func (p *Pause) Resume(ctx context.Context) bool {
	_, _, paused := p.Paused()
	p.resume(ctx, "resumed by an owner")
	return paused
}

// resume ends the pause: the lease goes, the parked entries go back to
// their queues, and every session with queued entries is looked at.
//
// The turns stay paused until the parked entries are back in their
// queues: a turn about to start meanwhile (a message that came as the
// pause ended) halts and queues behind them, never ahead. A turn whose
// batch was read from the queue before they went back checks the queue
// itself (see Released). Should they fail to go back, the pause goes on
// a minute more and its end is tried again.
func (p *Pause) resume(ctx context.Context, why string) {
	p.mu.Lock()
	was := !p.until.IsZero()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.mu.Unlock()
	if was {
		// Before the parked entries go back: a turn that sees the pause
		// lifted also sees Released (see there).
		p.released.Store(true)
	}
	if err := p.opts.Store.ReleaseLease(ctx, LeaseName, holder); err != nil {
		p.log.Error("ending the stored usage-limit pause failed", "error", err)
	}
	keys, err := p.opts.Store.Unpark(ctx)
	if err != nil {
		// They stay parked; the retry below, the next start or /resume
		// tries again.
		p.log.Error("putting the parked messages back in their queues failed", "error", err)
		if was {
			// And the pause goes on, a backoff's first step longer: a
			// newer message must not run ahead of the parked ones.
			p.mu.Lock()
			p.until = p.opts.Clock.Now().Add(FirstBackoff)
			p.arm()
			p.mu.Unlock()
			p.store(ctx)
			return
		}
	}
	p.mu.Lock()
	p.until, p.reason, p.told = time.Time{}, "", map[string]bool{}
	p.mu.Unlock()
	unparked := len(keys)
	if !was && unparked == 0 {
		return // nothing was held back
	}
	counts, err := p.opts.Store.PendingCounts(ctx)
	if err != nil {
		p.log.Error("reading the queues after the pause failed", "error", err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	for k := range counts {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	p.log.Info("the usage-limit pause ended", "why", why, "parked", unparked, "sessions", len(keys))
	if len(keys) > 0 {
		p.opts.Resume(keys)
	}
}

// Close stops the timer (the pause stays in the store).
func (p *Pause) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
}
