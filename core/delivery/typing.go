package delivery

import (
	"context"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Typing shows the typing indicator in tgt while the agent works:
// refreshed before it lapses (typingRefresh of the channel's declared
// lifetime), for at most max (the turn's timeout; 0: 10 min). The returned
// function seals it when the turn ends, so a late event cannot restart it;
// it waits for the indicator to be switched off (not asked of a channel
// whose indicator lapses by itself: Capabilities.TypingLapses).
func (d *Dispatcher) Typing(tgt message.Target, max time.Duration) (seal func()) {
	desc, ok := d.ch.Ready(tgt.Instance)
	if !ok || !desc.Typing {
		return func() {}
	}
	refresh := typingRefresh(desc.Capabilities.TypingLifetime)
	if max <= 0 {
		max = typingMax
	}
	ctx, cancel := context.WithCancel(d.ctx)
	deadline := d.clock.Now().Add(max)
	done := make(chan struct{})
	lapses := desc.Capabilities.TypingLapses
	set := func(ctx context.Context, on bool) {
		if !on && lapses {
			return
		}
		d.warm.do(func() {
			c, cc := context.WithTimeout(ctx, 5*time.Second)
			defer cc()
			_ = d.ch.SetTyping(c, tgt.Instance, channel.TypingRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, On: on})
		})
	}
	go func() {
		defer close(done)
		for {
			set(ctx, true)
			left := deadline.Sub(d.clock.Now())
			if left <= 0 {
				set(d.ctx, false)
				return
			}
			select {
			case <-ctx.Done():
				set(d.ctx, false)
				return
			case <-d.clock.After(min(refresh, left)):
			}
			if !d.clock.Now().Before(deadline) {
				set(d.ctx, false)
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// typingRefresh is how often the indicator of a channel whose indicator
// lasts lifetime is sent again: a fifth of it (at least 1 s) before it
// lapses, which covers the request's own way to the platform — Telegram's
// 5 s gives 4 s, Discord's 10 s 8 s. A channel that declares no lifetime
// gets channel.DefaultTypingLifetime's.
func typingRefresh(lifetime time.Duration) time.Duration {
	if lifetime <= 0 {
		lifetime = channel.DefaultTypingLifetime
	}
	return max(lifetime-max(lifetime/5, time.Second), lifetime/2)
}
