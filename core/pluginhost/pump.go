package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
)

// maxBatch bounds how many inbound messages are stored in one call.
const maxBatch = 256

// streamBuffer is the capacity of a Receive stream's channel.
const streamBuffer = 1024

// openStream opens a Receive stream that cancel ends.
func openStream(ctx context.Context, plug *host.Plugin) (*host.Stream, context.CancelFunc, error) {
	sctx, cancel := context.WithCancel(ctx)
	s, err := plug.Receive(sctx, streamBuffer)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return s, cancel, nil
}

// storeRetry is the pump's backoff while the Inbound function fails: the
// delay starts at first, doubles with every failed batch up to max, and
// resets after a batch is stored. Until the delay has passed the pump
// refuses what arrives without trying the store, so a failing store is
// tried about once per delay, however many messages wait.
type storeRetry struct {
	first, max time.Duration

	cur      time.Duration
	until    time.Time // refuse without trying before this instant
	reason   string    // why the last batch failed
	failures int       // batches nacked since the last success
	since    time.Time // the first failure since the last success
}

// fail records a failed batch at now and returns how long to back off.
func (r *storeRetry) fail(err error, now time.Time) time.Duration {
	if r.cur == 0 {
		r.cur, r.since = r.first, now
	} else {
		r.cur = min(r.cur*2, r.max)
	}
	r.until, r.reason = now.Add(r.cur), err.Error()
	r.failures++
	return r.cur
}

// failing reports whether the last batch failed.
func (r *storeRetry) failing() bool { return r.cur != 0 }

// reset records a stored batch.
func (r *storeRetry) reset() { *r = storeRetry{first: r.first, max: r.max} }

// pump moves a channel's inbound stream into the Inbound function and acks
// what it stored. Acks are sent by a separate goroutine so storing the next
// batch overlaps with acking the previous one; pending acks are merged.
//
// A batch the Inbound function fails to store is nacked: the plugin keeps
// it and sends it again after the delay the Nack carries (storeRetry), and
// batches arriving meanwhile are nacked too without trying the store, which
// keeps each chat's messages in order. A plugin that predates Nack, a
// failed Nack and a failed Ack end the stream instead: the pump waits out
// the delay and opens a new stream, on which the plugin redelivers all it
// has not seen acked (what was stored already is a duplicate for the store,
// and acked then). Either way the channel recovers without a restart.
func (i *Instance) pump(ctx context.Context, plug *host.Plugin, s *host.Stream, cancel context.CancelFunc) error {
	defer func() { cancel() }()
	acks := make(chan []uint64, 64)
	ackFailed := make(chan struct{}, 1)
	ackDone := make(chan struct{})
	go func() {
		defer close(ackDone)
		for ids := range acks {
		merge:
			for {
				select {
				case more, ok := <-acks:
					if !ok {
						break merge
					}
					ids = append(ids, more...)
				default:
					break merge
				}
			}
			if err := plug.Ack(ctx, ids...); err != nil && ctx.Err() == nil {
				i.log.Warn("ack failed; ending the stream so the plugin redelivers", "count", len(ids), "error", err)
				select {
				case ackFailed <- struct{}{}:
				default:
				}
			}
		}
	}()
	defer func() {
		close(acks)
		<-ackDone
	}()

	inbound := i.h.opts.Inbound
	retry := storeRetry{first: i.h.opts.InboundRetryFirst, max: i.h.opts.InboundRetryMax}
	nacker := &nacker{plug: plug, log: i.log}
	restart := false // the stream was ended on purpose: open another
	msgs := make([]channel.InboundMessage, 0, maxBatch)
	ids := make([]uint64, 0, maxBatch)
	for {
		var d host.Delivery
		ok := true
		select {
		case d, ok = <-s.C:
		case <-ackFailed:
			restart = true
			cancel()
			if !retry.failing() {
				retry.until = time.Now().Add(retry.first)
			}
			continue
		}
		if !ok {
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			err := s.Err()
			if restart {
				restart = false
				if !sleepUntil(ctx, retry.until) {
					return nil
				}
				var oerr error
				if s, cancel, oerr = openStream(ctx, plug); oerr != nil {
					return fmt.Errorf("plugin %s: reopen inbound stream: %w", i.spec.Instance, oerr)
				}
				continue
			}
			if errors.Is(err, host.ErrPluginExited) {
				return fmt.Errorf("plugin %s exited: %w", i.spec.Instance, err)
			}
			return fmt.Errorf("plugin %s: inbound stream: %w", i.spec.Instance, err)
		}
		if restart {
			// Sent before the stream ended: the plugin requeued it and
			// sends it again on the next stream.
			continue
		}
		msgs, ids = append(msgs[:0], d.Message), append(ids[:0], d.ID)
	drain:
		for len(msgs) < maxBatch {
			select {
			case d, ok := <-s.C:
				if !ok {
					break drain
				}
				msgs, ids = append(msgs, d.Message), append(ids, d.ID)
			default:
				break drain
			}
		}
		if inbound == nil {
			continue
		}
		if now := time.Now(); now.Before(retry.until) {
			// Still backing off: refuse without trying the store.
			retry.failures++
			if !nacker.nack(ctx, ids, retry.reason, retry.until.Sub(now)) {
				restart = true
				cancel()
			}
			continue
		}
		if err := inbound(ctx, i.spec.Instance, msgs); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			delay := retry.fail(err, time.Now())
			if retry.failures == 1 {
				i.log.Error("storing inbound messages failed; nacked, the plugin sends them again", "count", len(msgs), "error", err, "retry_in", delay)
			} else {
				i.log.Debug("storing inbound messages failed again", "count", len(msgs), "error", err, "retry_in", delay, "failures", retry.failures)
			}
			if !nacker.nack(ctx, ids, retry.reason, delay) {
				restart = true
				cancel()
			}
			continue
		}
		if retry.failing() {
			i.log.Info("storing inbound messages works again", "nacked_batches", retry.failures, "outage", time.Since(retry.since).Round(time.Millisecond))
			retry.reset()
		}
		acks <- append([]uint64(nil), ids...)
	}
}

// nacker sends Nacks to one plugin process and remembers whether it takes
// them.
type nacker struct {
	plug        *host.Plugin
	log         hclog.Logger
	unsupported bool
}

// nack refuses the deliveries ids. It reports false when the plugin did not
// take the Nack (it predates Nack, or the call failed): the caller then
// ends the stream so the plugin redelivers on the next one.
func (n *nacker) nack(ctx context.Context, ids []uint64, reason string, retry time.Duration) bool {
	if n.unsupported {
		return false
	}
	err := n.plug.Nack(ctx, reason, retry, ids...)
	switch {
	case err == nil:
		n.log.Debug("nacked inbound messages", "count", len(ids), "retry_in", retry)
		return true
	case errors.Is(err, host.ErrUnimplemented):
		n.unsupported = true
		n.log.Info("the plugin predates Nack: ending its inbound stream instead, it redelivers on the next one")
	case ctx.Err() == nil:
		n.log.Warn("nack failed; ending the inbound stream so the plugin redelivers", "count", len(ids), "error", err)
	}
	return false
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
