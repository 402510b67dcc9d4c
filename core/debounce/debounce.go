// Package debounce batches bursts of inbound messages per conversation, so a
// user who sends three short messages in a row gets one agent turn.
//
// It reproduces OpenClaw's inbound debouncer (src/auto-reply/
// inbound-debounce.ts, openclaw@2026.9.6), checked against its vectors:
//
//   - Debouncing is off by default (0). [Resolve] picks the effective delay:
//     a per-call override, else the per-instance setting, else the global
//     one; negative values are ignored.
//   - Items are grouped by key. Each new item restarts the key's timer
//     (sliding window), but never past first-item + max(delay, MaxWait);
//     MaxWait defaults to 5× the delay.
//   - An item that must not wait (a command, media, or delay 0) first
//     flushes whatever is pending for its key, then is delivered on its own,
//     so per-key order is preserved.
//   - Deliveries for one key never overlap and arrive in order.
//   - At most MaxTrackedKeys keys (default 2048) are buffered; beyond that
//     items are delivered unbatched.
//
// Time comes from an injected clock (Config.Clock), so tests advance a fake instead
// of sleeping.
package debounce

import (
	"github.com/clawhost/clawhost/core/internal/tstime"
	"sync"
	"time"
)

// DefaultMaxTrackedKeys bounds the number of keys buffered at once.
const DefaultMaxTrackedKeys = 2048

// Config configures a [Debouncer].
type Config[T any] struct {
	// Delay is the debounce window; <= 0 disables batching.
	Delay time.Duration
	// MaxWait caps the sliding window, measured from the first item of a
	// batch; <= 0 means 5×Delay. A value below Delay counts as Delay.
	MaxWait time.Duration
	// Key groups items (typically the session key). An empty key is never
	// buffered.
	Key func(T) string
	// ShouldDebounce reports whether an item may wait; nil means always.
	// Commands and media should return false.
	ShouldDebounce func(T) bool
	// Flush receives each batch, in order, never concurrently for one key.
	// It is called on the goroutine that triggered the flush (Enqueue or a
	// timer) and may block; other keys are not held up.
	Flush func(key string, items []T)
	// Clock defaults to the real one.
	Clock tstime.Clock
	// MaxTrackedKeys defaults to DefaultMaxTrackedKeys.
	MaxTrackedKeys int
}

// Debouncer batches items per key. It is safe for concurrent use.
type Debouncer[T any] struct {
	cfg     Config[T]
	maxWait time.Duration

	mu      sync.Mutex
	idle    *sync.Cond // signalled when an outbox is fully delivered
	pending map[string]*batch[T]
	outbox  map[string]*outbox[T]
	closed  bool
}

type batch[T any] struct {
	items    []T
	deadline time.Time
	timer    tstime.Timer
	gen      int // bumped on every reschedule; stale timer calls are ignored
}

// outbox serializes deliveries for one key.
type outbox[T any] struct {
	queue    [][]T
	draining bool
}

// New returns a Debouncer.
func New[T any](cfg Config[T]) *Debouncer[T] {
	cfg.Clock = tstime.Or(cfg.Clock)
	if cfg.MaxTrackedKeys <= 0 {
		cfg.MaxTrackedKeys = DefaultMaxTrackedKeys
	}
	maxWait := cfg.MaxWait
	if maxWait <= 0 {
		maxWait = 5 * cfg.Delay
	}
	d := &Debouncer[T]{cfg: cfg, maxWait: max(maxWait, cfg.Delay),
		pending: map[string]*batch[T]{}, outbox: map[string]*outbox[T]{}}
	d.idle = sync.NewCond(&d.mu)
	return d
}

// Enqueue adds an item. It may deliver synchronously (bypass items, delay 0,
// closed debouncer); otherwise delivery happens on a timer.
func (d *Debouncer[T]) Enqueue(item T) {
	key := ""
	if d.cfg.Key != nil {
		key = d.cfg.Key(item)
	}
	wait := d.cfg.Delay > 0 && key != "" && (d.cfg.ShouldDebounce == nil || d.cfg.ShouldDebounce(item))

	d.mu.Lock()
	if d.closed {
		wait = false
	}
	b := d.pending[key]
	if !wait || (b == nil && len(d.pending) >= d.cfg.MaxTrackedKeys) {
		if b != nil {
			d.takeLocked(key, b)
		}
		d.pushLocked(key, []T{item})
		d.mu.Unlock()
		d.drain(key)
		return
	}
	now := d.cfg.Clock.Now()
	if b == nil {
		b = &batch[T]{deadline: now.Add(d.maxWait)}
		d.pending[key] = b
	} else if b.timer != nil {
		b.timer.Stop()
	}
	b.items = append(b.items, item)
	fire := now.Add(d.cfg.Delay)
	if fire.After(b.deadline) {
		fire = b.deadline
	}
	b.gen++
	gen := b.gen
	b.timer = d.cfg.Clock.AfterFunc(fire.Sub(now), func() { d.fire(key, b, gen) })
	d.mu.Unlock()
}

// fire flushes b if it is still the pending batch of key and gen is its
// latest schedule.
func (d *Debouncer[T]) fire(key string, b *batch[T], gen int) {
	d.mu.Lock()
	if d.pending[key] != b || b.gen != gen {
		d.mu.Unlock()
		return
	}
	d.takeLocked(key, b)
	d.mu.Unlock()
	d.drain(key)
}

// takeLocked moves a pending batch to the key's outbox.
func (d *Debouncer[T]) takeLocked(key string, b *batch[T]) {
	if b.timer != nil {
		b.timer.Stop()
	}
	delete(d.pending, key)
	d.pushLocked(key, b.items)
}

func (d *Debouncer[T]) pushLocked(key string, items []T) {
	o := d.outbox[key]
	if o == nil {
		o = &outbox[T]{}
		d.outbox[key] = o
	}
	o.queue = append(o.queue, items)
}

// drain delivers the key's outbox unless another goroutine already is.
func (d *Debouncer[T]) drain(key string) {
	d.mu.Lock()
	o := d.outbox[key]
	if o == nil || o.draining {
		d.mu.Unlock()
		return
	}
	o.draining = true
	for len(o.queue) > 0 {
		items := o.queue[0]
		o.queue = o.queue[1:]
		d.mu.Unlock()
		if d.cfg.Flush != nil {
			d.cfg.Flush(key, items)
		}
		d.mu.Lock()
	}
	delete(d.outbox, key)
	d.idle.Broadcast()
	d.mu.Unlock()
}

// FlushAll delivers every pending batch now.
func (d *Debouncer[T]) FlushAll() {
	d.mu.Lock()
	keys := make([]string, 0, len(d.pending))
	for key, b := range d.pending {
		d.takeLocked(key, b)
		keys = append(keys, key)
	}
	d.mu.Unlock()
	for _, key := range keys {
		d.drain(key)
	}
}

// Close flushes everything pending and waits until every delivery in
// progress has returned; later items are delivered immediately. It must not
// be called from Flush.
func (d *Debouncer[T]) Close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.FlushAll()
	d.mu.Lock()
	for len(d.outbox) > 0 {
		d.idle.Wait()
	}
	d.mu.Unlock()
}

// Settings are the configured debounce delays. Negative values mean unset.
type Settings struct {
	// Global applies to every instance; nil means unset.
	Global *time.Duration
	// ByInstance overrides Global per channel instance.
	ByInstance map[string]time.Duration
}

// Resolve returns the effective delay (OpenClaw's resolveInboundDebounceMs):
// the first value >= 0 among override, the instance's setting and the global
// setting; otherwise 0 (disabled).
func Resolve(override *time.Duration, s Settings, instance string) time.Duration {
	if override != nil && *override >= 0 {
		return *override
	}
	if v, ok := s.ByInstance[instance]; ok && v >= 0 {
		return v
	}
	if s.Global != nil && *s.Global >= 0 {
		return *s.Global
	}
	return 0
}
