package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// maxBatch bounds how many inbound messages are stored in one call.
const maxBatch = 256

// streamBuffer is the capacity of a Receive stream's channel: one batch,
// so the next batch is ready while the pump stores one. The buffer is
// allocated whole when the stream opens and stays for the plugin's life:
// at 1024 deliveries of ~300 bytes it was 0.3 MB of every channel
// plugin's share of an idle host's heap (BenchmarkIdleRSS).
const streamBuffer = maxBatch

// openStream opens a Receive stream that cancel ends.
func openStream(ctx context.Context, plug *pluginclient.Plugin) (*pluginclient.Stream, context.CancelFunc, error) {
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
func (i *Instance) pump(ctx context.Context, plug *pluginclient.Plugin, s *pluginclient.Stream, cancel context.CancelFunc) error {
	p := &pumper{
		i:         i,
		ctx:       ctx,
		plug:      plug,
		s:         s,
		cancel:    cancel,
		inbound:   answeringInvites(plug, i.h.opts.Inbound, i.h.opts.Invite),
		retry:     storeRetry{first: i.h.opts.InboundRetryFirst, max: i.h.opts.InboundRetryMax},
		nacker:    &nacker{plug: plug, log: i.log},
		acks:      make(chan []uint64, 64),
		ackFailed: make(chan struct{}, 1),
	}
	defer func() { p.cancel() }()
	ackDone := make(chan struct{})
	go p.sendAcks(ackDone)
	defer func() {
		close(p.acks)
		<-ackDone
	}()

	for {
		select {
		case d, ok := <-p.s.C:
			if !ok {
				if reopened, err := p.streamEnded(); !reopened {
					return err
				}
				continue
			}
			if p.restart {
				// Sent before the stream ended: the plugin requeued it and
				// sends it again on the next stream.
				continue
			}
			p.readBatch(d)
			if p.inbound == nil || p.refuseWhileBackingOff() {
				continue
			}
			if stopping := p.storeAndAck(); stopping {
				return nil
			}
		case <-p.ackFailed:
			p.ackFailedEnd()
		}
	}
}

// pumper is the state of one pump: the stream it reads (replaced when it is
// reopened), the store's backoff, and the acks on their way to the plugin.
type pumper struct {
	i       *Instance
	ctx     context.Context
	plug    *pluginclient.Plugin
	s       *pluginclient.Stream
	cancel  context.CancelFunc // ends s
	inbound InboundFunc
	retry   storeRetry
	nacker  *nacker
	restart bool // the stream was ended on purpose: open another

	acks      chan []uint64 // ids stored, to ack; closed when the pump returns
	ackFailed chan struct{} // an Ack failed: end the stream

	// The current batch and its delivery ids. They grow with the batches
	// that come and are reused: an idle channel never holds maxBatch
	// messages' worth (72 KB) it has not needed.
	msgs []channel.InboundMessage
	ids  []uint64
}

// sendAcks acks what arrives on acks, merging whatever is pending into one
// call, until acks is closed; then it closes done. A failed Ack is signalled
// on ackFailed.
func (p *pumper) sendAcks(done chan<- struct{}) {
	defer close(done)
	for ids := range p.acks {
	merge:
		for {
			select {
			case more, ok := <-p.acks:
				if !ok {
					break merge
				}
				ids = append(ids, more...)
			default:
				break merge
			}
		}
		if err := p.plug.Ack(p.ctx, ids...); err != nil && p.ctx.Err() == nil {
			p.i.log.Warn("ack failed; ending the stream so the plugin redelivers", "count", len(ids), "error", err)
			select {
			case p.ackFailed <- struct{}{}:
			default:
			}
		}
	}
}

// endStream ends the stream on purpose: the plugin requeues what it has
// not seen acked, and the pump opens another stream once it has ended.
func (p *pumper) endStream() {
	p.restart = true
	p.cancel()
}

// ackFailedEnd ends the stream after a failed Ack. The next one opens when
// the store's backoff has passed or, if the store works, after the first
// delay.
func (p *pumper) ackFailedEnd() {
	p.endStream()
	if !p.retry.failing() {
		p.retry.until = p.i.h.opts.Clock.Now().Add(p.retry.first)
	}
}

// streamEnded handles the end of the stream. One ended on purpose is
// reopened once the backoff has passed (reopened is true); otherwise err
// says why the pump returns (nil when the instance is stopping).
func (p *pumper) streamEnded() (reopened bool, err error) {
	p.cancel()
	if p.ctx.Err() != nil {
		return false, nil
	}
	err = p.s.Err()
	if p.restart {
		p.restart = false
		if !sleepUntil(p.ctx, p.i.h.opts.Clock, p.retry.until) {
			return false, nil
		}
		s, cancel, oerr := openStream(p.ctx, p.plug)
		if oerr != nil {
			// p.cancel stays the old stream's (already called): a nil
			// cancel here would panic when pump returns.
			return false, fmt.Errorf("plugin %s: reopen inbound stream: %w", p.i.spec.Instance, oerr)
		}
		p.s, p.cancel = s, cancel
		return true, nil
	}
	if errors.Is(err, pluginclient.ErrPluginExited) {
		return false, fmt.Errorf("plugin %s exited: %w", p.i.spec.Instance, err)
	}
	return false, fmt.Errorf("plugin %s: inbound stream: %w", p.i.spec.Instance, err)
}

// readBatch makes d the first message of a new batch and adds what else
// waits on the stream, up to maxBatch, without blocking.
func (p *pumper) readBatch(d pluginclient.Delivery) {
	p.msgs, p.ids = append(p.msgs[:0], d.Message), append(p.ids[:0], d.ID)
	for len(p.msgs) < maxBatch {
		select {
		case d, ok := <-p.s.C:
			if !ok {
				return
			}
			p.msgs, p.ids = append(p.msgs, d.Message), append(p.ids, d.ID)
		default:
			return
		}
	}
}

// refuseWhileBackingOff nacks the batch without trying the store while the
// store's backoff has not passed, and reports whether it did.
func (p *pumper) refuseWhileBackingOff() bool {
	now := p.i.h.opts.Clock.Now()
	if !now.Before(p.retry.until) {
		return false
	}
	p.retry.failures++
	if !p.nacker.nack(p.ctx, p.ids, p.retry.reason, p.retry.until.Sub(now)) {
		p.endStream()
	}
	return true
}

// storeAndAck hands the batch to the Inbound function and queues its ack;
// when the store fails it backs off and nacks the batch. It reports whether
// the instance is stopping.
func (p *pumper) storeAndAck() (stopping bool) {
	if err := p.inbound(p.ctx, p.i.spec.Instance, p.msgs); err != nil {
		if p.ctx.Err() != nil {
			return true
		}
		delay := p.retry.fail(err, p.i.h.opts.Clock.Now())
		if p.retry.failures == 1 {
			p.i.log.Error("storing inbound messages failed; nacked, the plugin sends them again", "count", len(p.msgs), "error", err, "retry_in", delay)
		} else {
			p.i.log.Debug("storing inbound messages failed again", "count", len(p.msgs), "error", err, "retry_in", delay, "failures", p.retry.failures)
		}
		if !p.nacker.nack(p.ctx, p.ids, p.retry.reason, delay) {
			p.endStream()
		}
		return false
	}
	if p.retry.failing() {
		p.i.log.Info("storing inbound messages works again", "nacked_batches", p.retry.failures, "outage", p.i.h.opts.Clock.Since(p.retry.since).Round(time.Millisecond))
		p.retry.reset()
	}
	p.acks <- append([]uint64(nil), p.ids...)
	return false
}

// nacker sends Nacks to one plugin process and remembers whether it takes
// them.
type nacker struct {
	plug        *pluginclient.Plugin
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
	case errors.Is(err, pluginclient.ErrUnimplemented):
		n.unsupported = true
		n.log.Info("the plugin predates Nack: ending its inbound stream instead, it redelivers on the next one")
	case ctx.Err() == nil:
		n.log.Warn("nack failed; ending the inbound stream so the plugin redelivers", "count", len(ids), "error", err)
	}
	return false
}

// sleepUntil waits until t on clock; false if ctx ended first.
func sleepUntil(ctx context.Context, clock tstime.Clock, t time.Time) bool {
	d := t.Sub(clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer, fired := clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		return false
	}
}
