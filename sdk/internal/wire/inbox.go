package wire

import (
	"context"
	"errors"
	"sort"
	"sync"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// ErrStopping is returned by Deliver when the plugin is shutting down.
var ErrStopping = errors.New("plugin is stopping")

// delivery is one inbound message waiting for the host's ack.
type delivery struct {
	msg  *pb.InboundMessage
	done chan struct{} // closed on ack
	// abandoned is set when the delivering caller gave up; guarded by Inbox.mu.
	abandoned bool
}

// Inbox queues inbound messages until a Receive stream sends them and keeps
// them in flight until the host acks. In-flight messages of a stream that
// ends go back to the front of the queue, so a message is redelivered until
// it is acked (at-least-once; the host dedupes).
type Inbox struct {
	mu       sync.Mutex
	nextID   uint64
	queue    []*delivery
	inflight map[uint64]*delivery
	wake     chan struct{} // capacity 1: something was queued
	stopped  chan struct{}
	stopOnce sync.Once
	// MaxMessageBytes bounds one encoded message; larger ones are refused
	// by Deliver rather than poisoning the stream.
	MaxMessageBytes int
}

// NewInbox returns an empty Inbox.
func NewInbox() *Inbox {
	return &Inbox{inflight: map[uint64]*delivery{}, wake: make(chan struct{}, 1), stopped: make(chan struct{}), MaxMessageBytes: 8 << 20}
}

var _ channel.Inbox = (*Inbox)(nil)

// Deliver implements channel.Inbox.
func (in *Inbox) Deliver(ctx context.Context, msgs ...channel.InboundMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	ds := make([]*delivery, len(msgs))
	in.mu.Lock()
	for i, m := range msgs {
		in.nextID++
		p := InboundToProto(m, in.nextID)
		if n := protoSize(p); in.MaxMessageBytes > 0 && n > in.MaxMessageBytes {
			in.mu.Unlock()
			return channel.Errorf(channel.CodeMessageTooLong, "inbound message %q is %d bytes encoded, over the %d byte limit", m.MessageID, n, in.MaxMessageBytes)
		}
		ds[i] = &delivery{msg: p, done: make(chan struct{})}
	}
	in.queue = append(in.queue, ds...)
	in.mu.Unlock()
	in.signal()
	for _, d := range ds {
		select {
		case <-d.done:
		case <-ctx.Done():
			in.abandon(ds)
			return ctx.Err()
		case <-in.stopped:
			return ErrStopping
		}
	}
	return nil
}

func (in *Inbox) abandon(ds []*delivery) {
	in.mu.Lock()
	for _, d := range ds {
		d.abandoned = true
	}
	in.mu.Unlock()
}

func (in *Inbox) signal() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// Stop makes pending and future Deliver calls fail with ErrStopping.
func (in *Inbox) Stop() { in.stopOnce.Do(func() { close(in.stopped) }) }

// Ack resolves the given deliveries. Unknown ids (already acked, or from an
// earlier process) are ignored.
func (in *Inbox) Ack(ids []uint64) {
	in.mu.Lock()
	for _, id := range ids {
		if d, ok := in.inflight[id]; ok {
			delete(in.inflight, id)
			close(d.done)
		}
	}
	in.mu.Unlock()
}

// take returns the queued deliveries, moving them in flight.
func (in *Inbox) take() []*pb.InboundMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]*pb.InboundMessage, 0, len(in.queue))
	for _, d := range in.queue {
		if d.abandoned {
			continue
		}
		in.inflight[d.msg.DeliveryId] = d
		out = append(out, d.msg)
	}
	in.queue = in.queue[:0]
	return out
}

// requeue puts every in-flight delivery back at the front of the queue, in
// delivery order. Called when a stream ends.
func (in *Inbox) requeue() {
	in.mu.Lock()
	back := make([]*delivery, 0, len(in.inflight))
	for id, d := range in.inflight {
		back = append(back, d)
		delete(in.inflight, id)
	}
	sort.Slice(back, func(i, j int) bool { return back[i].msg.DeliveryId < back[j].msg.DeliveryId })
	in.queue = append(back, in.queue...)
	in.mu.Unlock()
	if len(back) > 0 {
		in.signal()
	}
}

// Stream sends queued deliveries with send until ctx ends or send fails.
func (in *Inbox) Stream(ctx context.Context, send func(*pb.InboundMessage) error) error {
	defer in.requeue()
	for {
		for _, m := range in.take() {
			if err := send(m); err != nil {
				return err
			}
		}
		select {
		case <-in.wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-in.stopped:
			return ErrStopping
		}
	}
}
