package wire

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

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
	// offered: a Nack refuses it (refused closed, refusal set) instead of
	// queueing it again; the platform sends it again (Offer).
	offered bool
	refused chan struct{}
	refusal error
}

// Nack retry bounds: a Nack without retry_after waits DefaultNackRetry; a
// longer retry_after than MaxNackRetry is cut to it, so a confused host
// cannot silence a plugin for long.
const (
	DefaultNackRetry = time.Second
	MaxNackRetry     = time.Minute
)

// Inbox queues inbound messages until a Receive stream sends them and keeps
// them in flight until the host acks. A message is redelivered until it is
// acked (at-least-once; the host dedupes):
//
//   - in-flight messages of a stream that ends go back to the queue, and
//     the next stream sends them first;
//   - a nacked message (the host could not store it) goes back to the
//     queue, and the inbox holds every send back for the retry delay the
//     host asked for; then it sends the queue again in delivery order, on
//     whatever stream is open.
//
// Deliver does not see nacks: it keeps waiting until the host acked every
// one of its messages, or its ctx ends. Offer does: its messages are not
// queued again, and it returns the host's refusal at once.
type Inbox struct {
	mu       sync.Mutex
	nextID   uint64
	queue    []*delivery // in delivery id order
	inflight map[uint64]*delivery
	hold     <-chan time.Time // non-nil: send nothing until it fires
	wake     chan struct{}    // capacity 1: something was queued, or hold changed
	stopped  chan struct{}
	stopOnce sync.Once
	// MaxMessageBytes bounds one encoded message. A larger one would
	// poison the stream (over the gRPC frame limit): Deliver hands the host
	// a stub of it instead (oversizeStub), which the host answers with a
	// notice, so the platform's offset moves on.
	MaxMessageBytes int
	// After returns a channel that fires after d (time.After); tests
	// replace it to release a hold without waiting.
	After func(d time.Duration) <-chan time.Time
}

// NewInbox returns an empty Inbox.
func NewInbox() *Inbox {
	return &Inbox{inflight: map[uint64]*delivery{}, wake: make(chan struct{}, 1), stopped: make(chan struct{}), MaxMessageBytes: 8 << 20, After: time.After}
}

var _ channel.Inbox = (*Inbox)(nil)

// Deliver implements channel.Inbox.
func (in *Inbox) Deliver(ctx context.Context, msgs ...channel.InboundMessage) error {
	return in.deliver(ctx, false, msgs)
}

// Offer is Deliver that returns at the host's first refusal (a Nack of
// one of its messages) with a *channel.Error of code CodeUnavailable
// carrying the host's retry delay; the refused messages are forgotten
// (see channel.Offer).
func (in *Inbox) Offer(ctx context.Context, msgs ...channel.InboundMessage) error {
	return in.deliver(ctx, true, msgs)
}

func (in *Inbox) deliver(ctx context.Context, offered bool, msgs []channel.InboundMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	ds := make([]*delivery, len(msgs))
	in.mu.Lock()
	for i, m := range msgs {
		in.nextID++
		p := InboundToProto(m, in.nextID)
		if n := protoSize(p); in.MaxMessageBytes > 0 && n > in.MaxMessageBytes {
			p = InboundToProto(oversizeStub(m, n), in.nextID)
		}
		ds[i] = &delivery{msg: p, done: make(chan struct{}), offered: offered, refused: make(chan struct{})}
	}
	in.queue = append(in.queue, ds...)
	in.mu.Unlock()
	in.signal()
	for _, d := range ds {
		select {
		case <-d.done:
		case <-d.refused:
			in.abandon(ds) // the platform sends them again
			return d.refusal
		case <-ctx.Done():
			in.abandon(ds)
			return ctx.Err()
		case <-in.stopped:
			return ErrStopping
		}
	}
	return nil
}

// oversizeStub is what the host gets of a message too large to carry: who
// wrote it where and when, and its size; no text, reply or media.
func oversizeStub(m channel.InboundMessage, size int) channel.InboundMessage {
	clip := func(s string) string {
		if len(s) > 1024 { // ids, names and titles are short on every platform
			s = strings.ToValidUTF8(s[:1024], "")
		}
		return s
	}
	snd := channel.Sender{ID: clip(m.Sender.ID), Name: clip(m.Sender.Name), Username: clip(m.Sender.Username), IsBot: m.Sender.IsBot}
	return channel.InboundMessage{
		ChatType: m.ChatType, ChatID: clip(m.ChatID), ThreadID: clip(m.ThreadID), MessageID: clip(m.MessageID),
		Sender: snd, Timestamp: m.Timestamp, ChatTitle: clip(m.ChatTitle), Edited: m.Edited,
		WasMentioned:  m.WasMentioned || (m.ReplyTo != nil && m.ReplyTo.ToBot),
		OversizeBytes: int64(size),
	}
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

// Nack hands in-flight deliveries back: they return to the queue in
// delivery order, and nothing is sent before retry has passed (zero means
// DefaultNackRetry; at most MaxNackRetry). An offered delivery (Offer) is
// refused instead: its Offer returns the refusal, and it is not queued. Unknown ids (acked, or not in
// flight) are ignored; a Nack that matches nothing changes nothing. It
// returns how many deliveries it handed back.
func (in *Inbox) Nack(ids []uint64, retry time.Duration) int {
	if retry <= 0 {
		retry = DefaultNackRetry
	}
	retry = min(retry, MaxNackRetry)
	in.mu.Lock()
	var back []*delivery
	refused := 0
	for _, id := range ids {
		d, ok := in.inflight[id]
		if !ok {
			continue
		}
		delete(in.inflight, id)
		if d.offered {
			refused++
			d.refusal = &channel.Error{Code: channel.CodeUnavailable, Message: "the host could not store the message; send it again", RetryAfter: retry}
			close(d.refused)
			continue
		}
		back = append(back, d)
	}
	if len(back) == 0 {
		in.mu.Unlock()
		return refused
	}
	in.requeueLocked(back)
	in.hold = in.After(retry)
	in.mu.Unlock()
	in.signal()
	return len(back) + refused
}

// requeueLocked merges ds back into the queue, keeping delivery id order.
func (in *Inbox) requeueLocked(ds []*delivery) {
	in.queue = append(in.queue, ds...)
	sort.Slice(in.queue, func(i, j int) bool { return in.queue[i].msg.DeliveryId < in.queue[j].msg.DeliveryId })
}

// holding returns the pending hold, if any.
func (in *Inbox) holding() <-chan time.Time {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.hold
}

// release ends the hold h, unless a later Nack replaced it.
func (in *Inbox) release(h <-chan time.Time) {
	in.mu.Lock()
	if in.hold == h {
		in.hold = nil
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

// requeue puts every in-flight delivery back into the queue, in delivery
// order. Called when a stream ends.
func (in *Inbox) requeue() {
	in.mu.Lock()
	back := make([]*delivery, 0, len(in.inflight))
	for id, d := range in.inflight {
		back = append(back, d)
		delete(in.inflight, id)
	}
	if len(back) > 0 {
		in.requeueLocked(back)
	}
	in.mu.Unlock()
	if len(back) > 0 {
		in.signal()
	}
}

// Stream sends queued deliveries with send until ctx ends or send fails.
// While a Nack's hold lasts it sends nothing.
func (in *Inbox) Stream(ctx context.Context, send func(*pb.InboundMessage) error) error {
	defer in.requeue()
	for {
		if h := in.holding(); h != nil {
			select {
			case <-h:
				in.release(h)
			case <-in.wake: // queued, or a later Nack replaced the hold
			case <-ctx.Done():
				return ctx.Err()
			case <-in.stopped:
				return ErrStopping
			}
			continue
		}
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
