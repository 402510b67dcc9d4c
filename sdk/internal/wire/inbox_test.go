package wire

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// fakeAfter replaces Inbox.After: it records the delays asked for and
// fires a hold only when the test says so.
type fakeAfter struct {
	mu     sync.Mutex
	delays []time.Duration
	chans  []chan time.Time
}

func (f *fakeAfter) after(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan time.Time, 1)
	f.delays, f.chans = append(f.delays, d), append(f.chans, c)
	return c
}

// fire releases the latest hold.
func (f *fakeAfter) fire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chans[len(f.chans)-1] <- time.Now()
}

func (f *fakeAfter) asked() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.delays...)
}

// streamed runs in.Stream until the test ends and yields what it sends.
func streamed(t *testing.T, in *Inbox) (<-chan *pb.InboundMessage, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan *pb.InboundMessage, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = in.Stream(ctx, func(m *pb.InboundMessage) error { out <- m; return nil })
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return out, stop
}

// deliver calls Deliver in the background; the channel yields its result.
func deliver(in *Inbox, id string) <-chan error {
	res := make(chan error, 1)
	go func() {
		res <- in.Deliver(context.Background(), channel.InboundMessage{ChatID: "c", MessageID: id, Text: id})
	}()
	return res
}

func next(t *testing.T, c <-chan *pb.InboundMessage) *pb.InboundMessage {
	t.Helper()
	select {
	case m := <-c:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("nothing sent")
		return nil
	}
}

// none asserts nothing is sent for a moment.
func none(t *testing.T, c <-chan *pb.InboundMessage, why string) {
	t.Helper()
	select {
	case m := <-c:
		t.Fatalf("%s: sent %q (delivery %d)", why, m.GetMessageId(), m.GetDeliveryId())
	case <-time.After(50 * time.Millisecond):
	}
}

func pending(t *testing.T, res <-chan error, what string) {
	t.Helper()
	select {
	case err := <-res:
		t.Fatalf("%s returned (%v) before its ack", what, err)
	default:
	}
}

func returned(t *testing.T, res <-chan error, what string) {
	t.Helper()
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return after its ack", what)
	}
}

// TestInboxNackRedeliversAfterBackoff: a nacked message comes back after
// the host's delay, in delivery order and with its delivery id, everything
// is held back until then, Deliver keeps waiting through the nack, and an
// acked message is never sent again (not after the nack, not on a new
// stream).
func TestInboxNackRedeliversAfterBackoff(t *testing.T) {
	t.Parallel()
	clock := &fakeAfter{}
	in := NewInbox()
	in.After = clock.after
	sent, stop := streamed(t, in)

	r1 := deliver(in, "m1")
	first := next(t, sent)
	r2 := deliver(in, "m2")
	second := next(t, sent)
	if first.GetMessageId() != "m1" || second.GetMessageId() != "m2" {
		t.Fatalf("sent %q, %q; want m1, m2", first.GetMessageId(), second.GetMessageId())
	}

	in.Ack([]uint64{second.GetDeliveryId()})
	returned(t, r2, "Deliver(m2)")
	if n := in.Nack([]uint64{first.GetDeliveryId(), second.GetDeliveryId()}, 300*time.Millisecond); n != 1 {
		t.Fatalf("Nack handed back %d deliveries, want 1 (m2 is acked)", n)
	}
	if got := clock.asked(); len(got) != 1 || got[0] != 300*time.Millisecond {
		t.Fatalf("hold delays %v, want [300ms]", got)
	}
	pending(t, r1, "Deliver(m1)")

	r3 := deliver(in, "m3")
	none(t, sent, "during the hold")
	pending(t, r1, "Deliver(m1)")

	clock.fire()
	again := next(t, sent)
	third := next(t, sent)
	if again.GetMessageId() != "m1" || again.GetDeliveryId() != first.GetDeliveryId() {
		t.Fatalf("after the hold sent %q (delivery %d), want m1 again (delivery %d)", again.GetMessageId(), again.GetDeliveryId(), first.GetDeliveryId())
	}
	if third.GetMessageId() != "m3" {
		t.Fatalf("then sent %q, want m3", third.GetMessageId())
	}
	none(t, sent, "after the redelivery")

	in.Ack([]uint64{again.GetDeliveryId(), third.GetDeliveryId()})
	returned(t, r1, "Deliver(m1)")
	returned(t, r3, "Deliver(m3)")

	// A new stream sends nothing: everything was acked.
	stop()
	if left := in.take(); len(left) != 0 {
		t.Fatalf("%d deliveries left after every ack", len(left))
	}
}

// TestInboxNackRetryBounds: the delay the inbox waits for a Nack.
func TestInboxNackRetryBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		ids       []uint64
		retry     time.Duration
		wantN     int
		wantDelay []time.Duration
	}{
		{"host's delay", []uint64{1}, 2 * time.Second, 1, []time.Duration{2 * time.Second}},
		{"zero means the default", []uint64{1}, 0, 1, []time.Duration{DefaultNackRetry}},
		{"capped", []uint64{1}, time.Hour, 1, []time.Duration{MaxNackRetry}},
		{"unknown ids hold nothing", []uint64{7}, time.Second, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeAfter{}
			in := NewInbox()
			in.After = clock.after
			t.Cleanup(in.Stop) // ends the Deliver below
			sent, _ := streamed(t, in)
			_ = deliver(in, "m1")
			next(t, sent)
			if n := in.Nack(c.ids, c.retry); n != c.wantN {
				t.Errorf("Nack handed back %d, want %d", n, c.wantN)
			}
			if got := clock.asked(); len(got) != len(c.wantDelay) || (len(got) > 0 && got[0] != c.wantDelay[0]) {
				t.Errorf("hold delays %v, want %v", got, c.wantDelay)
			}
		})
	}
}

// TestInboxOversizeIsAStub: a message over MaxMessageBytes does not fail
// Deliver (the platform's offset would never move); the host gets a stub
// with its ids, sender and size, without the text or reply, in its place
// among the others, and Deliver returns once everything is acked.
func TestInboxOversizeIsAStub(t *testing.T) {
	t.Parallel()
	in := NewInbox()
	in.MaxMessageBytes = 1000
	sent, _ := streamed(t, in)
	big := strings.Repeat("x", 5000)
	res := make(chan error, 1)
	go func() {
		res <- in.Deliver(context.Background(),
			channel.InboundMessage{ChatID: "c", MessageID: "small-1", Text: "hi"},
			channel.InboundMessage{ChatID: "c", MessageID: "big", Text: big, Sender: channel.Sender{ID: "u", Name: "Ann"},
				ReplyTo: &channel.ReplyTo{MessageID: "b1", Text: "earlier", ToBot: true}},
			channel.InboundMessage{ChatID: "c", MessageID: "small-2", Text: "there"})
	}()
	var got []*pb.InboundMessage
	for range 3 {
		got = append(got, next(t, sent))
	}
	pending(t, res, "Deliver")
	stub := got[1]
	if got[0].GetMessageId() != "small-1" || stub.GetMessageId() != "big" || got[2].GetMessageId() != "small-2" {
		t.Fatalf("sent %v, %v, %v", got[0].GetMessageId(), stub.GetMessageId(), got[2].GetMessageId())
	}
	if stub.GetOversizeBytes() < 5000 || stub.GetText() != "" || stub.GetReplyTo() != nil || stub.GetSender().GetName() != "Ann" ||
		!stub.GetWasMentioned() || got[0].GetOversizeBytes() != 0 {
		t.Errorf("stub %v", stub)
	}
	for _, m := range got {
		in.Ack([]uint64{m.GetDeliveryId()})
	}
	returned(t, res, "Deliver with an oversize message")
}

// TestInboxOfferReturnsTheRefusal: an offered message the host nacks makes
// Offer return at once with a retryable error carrying the host's delay,
// and it is not sent again by the inbox (the platform sends it again); a
// message delivered beside it keeps waiting and is sent again after the
// hold; an offered message the host acks returns nil.
func TestInboxOfferReturnsTheRefusal(t *testing.T) {
	t.Parallel()
	clock := &fakeAfter{}
	in := NewInbox()
	in.After = clock.after
	sent, _ := streamed(t, in)

	offered := make(chan error, 1)
	go func() {
		offered <- channel.Offer(context.Background(), in, channel.InboundMessage{ChatID: "c", MessageID: "o1", Text: "o1"})
	}()
	o1 := next(t, sent)
	r2 := deliver(in, "m2")
	m2 := next(t, sent)
	if n := in.Nack([]uint64{o1.GetDeliveryId(), m2.GetDeliveryId()}, 2*time.Second); n != 2 {
		t.Fatalf("Nack handled %d deliveries, want 2", n)
	}
	select {
	case err := <-offered:
		var ce *channel.Error
		if !errors.As(err, &ce) || ce.Code != channel.CodeUnavailable || !ce.Code.Retryable() || ce.RetryAfter != 2*time.Second {
			t.Fatalf("Offer returned %v, want a retryable unavailable error with the host's 2s", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Offer did not return after the host refused its message")
	}
	pending(t, r2, "Deliver(m2)")
	clock.fire()
	if again := next(t, sent); again.GetMessageId() != "m2" {
		t.Fatalf("after the hold sent %q, want m2 (o1 is the platform's to send again)", again.GetMessageId())
	}
	none(t, sent, "after the hold")
	in.Ack([]uint64{m2.GetDeliveryId()})
	returned(t, r2, "Deliver(m2)")

	go func() {
		offered <- in.Offer(context.Background(), channel.InboundMessage{ChatID: "c", MessageID: "o2", Text: "o2"})
	}()
	o2 := next(t, sent)
	in.Ack([]uint64{o2.GetDeliveryId()})
	returned(t, offered, "Offer(o2)")
}
