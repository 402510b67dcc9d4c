package whatsapp

import (
	"context"
	"sync"
	"time"
)

// pacer spaces the messages the plugin sends: between two sends (to any
// chat: WhatsApp judges the account) it keeps a pause drawn uniformly from
// [min, max]. A send after a quiet spell goes at once. Sends wait their
// turn in the order they asked.
type pacer struct {
	min, max time.Duration
	// now is the clock, rand a uniform draw in [0, 1), sleep waits d or
	// until ctx ends. Tests replace them.
	now   func() time.Time
	rand  func() float64
	sleep func(ctx context.Context, d time.Duration) error

	mu   sync.Mutex
	next time.Time // the earliest time of the next send
}

// wait blocks until this send may go. It reserves its slot first, so a
// send canceled while waiting leaves the pause of its slot behind it,
// which errs on the side of sending less.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := p.now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.gap())
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		return p.sleep(ctx, d)
	}
	return ctx.Err()
}

// gap draws the pause after one send.
func (p *pacer) gap() time.Duration {
	if p.max <= p.min {
		return p.min
	}
	return p.min + time.Duration(p.rand()*float64(p.max-p.min))
}
