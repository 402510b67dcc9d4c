package pluginhost

import (
	"context"
	"errors"
	"net"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// legacyChannel is the gRPC side of a channel plugin built before Nack
// existed, written against the proto: every Receive stream sends all
// unacked messages in delivery order, then what push adds; Nack answers
// Unimplemented (the embedded default).
type legacyChannel struct {
	pb.UnimplementedChannelServiceServer

	mu      sync.Mutex
	unacked map[uint64]*pb.InboundMessage
	acked   map[uint64]int
	streams int
	live    chan *pb.InboundMessage // to the open stream
}

func newLegacyChannel() *legacyChannel {
	return &legacyChannel{unacked: map[uint64]*pb.InboundMessage{}, acked: map[uint64]int{}, live: make(chan *pb.InboundMessage, 64)}
}

func (f *legacyChannel) push(id uint64) {
	m := &pb.InboundMessage{DeliveryId: id, ChatType: "direct", ChatId: "c", MessageId: "m" + strconv.FormatUint(id, 10), Sender: &pb.Sender{Id: "u"}, Text: "hi"}
	f.mu.Lock()
	f.unacked[id] = m
	f.mu.Unlock()
	f.live <- m
}

func (f *legacyChannel) Receive(_ *pb.ReceiveRequest, stream grpc.ServerStreamingServer[pb.InboundMessage]) error {
	f.mu.Lock()
	f.streams++
	// What was pushed for an earlier stream is sent from unacked below.
	for len(f.live) > 0 {
		<-f.live
	}
	ids := make([]uint64, 0, len(f.unacked))
	for id := range f.unacked {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	msgs := make([]*pb.InboundMessage, len(ids))
	for i, id := range ids {
		msgs[i] = f.unacked[id]
	}
	f.mu.Unlock()
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	for {
		select {
		case m := <-f.live:
			if err := stream.Send(m); err != nil {
				return err
			}
		case <-stream.Context().Done():
			return nil
		}
	}
}

func (f *legacyChannel) Ack(_ context.Context, req *pb.AckRequest) (*pb.AckResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range req.GetDeliveryIds() {
		delete(f.unacked, id)
		f.acked[id]++
	}
	return &pb.AckResponse{}, nil
}

func (f *legacyChannel) streamCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams
}

// nackingChannel is legacyChannel with Nack: it records each Nack and sends
// the nacked messages again on the open stream after retry_after, as the
// sdk does.
type nackingChannel struct {
	*legacyChannel
	nmu   sync.Mutex
	nacks []*pb.NackRequest
}

func (f *nackingChannel) Nack(_ context.Context, req *pb.NackRequest) (*pb.NackResponse, error) {
	f.nmu.Lock()
	f.nacks = append(f.nacks, req)
	f.nmu.Unlock()
	f.mu.Lock()
	var back []*pb.InboundMessage
	for _, id := range req.GetDeliveryIds() {
		if m, ok := f.unacked[id]; ok {
			back = append(back, m)
		}
	}
	f.mu.Unlock()
	go func() {
		time.Sleep(time.Duration(req.GetRetryAfterMs()) * time.Millisecond) // the fake plugin honours retry_after
		for _, m := range back {
			f.live <- m
		}
	}()
	return &pb.NackResponse{}, nil
}

func (f *nackingChannel) retries() []time.Duration {
	f.nmu.Lock()
	defer f.nmu.Unlock()
	var out []time.Duration
	for _, n := range f.nacks {
		out = append(out, time.Duration(n.GetRetryAfterMs())*time.Millisecond)
	}
	return out
}

// flakyStore is an Inbound function whose next fails calls fail, as a
// locked journal does; it counts what it stored per message id.
type flakyStore struct {
	mu     sync.Mutex
	fails  int
	stored map[string]int
	calls  []time.Time // of failed calls
	// decide, when set, is the supervisor's Invite.
	decide InviteFunc
}

func (s *flakyStore) failNext(n int) {
	s.mu.Lock()
	s.fails = n
	s.mu.Unlock()
}

func (s *flakyStore) inbound(_ context.Context, _ string, msgs []channel.InboundMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		s.calls = append(s.calls, time.Now())
		return errors.New("database is locked (5) (SQLITE_BUSY)")
	}
	for _, m := range msgs {
		s.stored[m.MessageID]++
	}
	return nil
}

func (s *flakyStore) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[id]
}

// serveLoopback serves a gRPC server, its services registered by
// register, on a loopback port and returns a client connection to it;
// both end with the test (after the cleanups registered later).
func serveLoopback(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	register(gs)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// runPump serves srv over loopback gRPC and pumps its inbound stream into
// store, as runOnce does for a plugin process.
func runPump(t *testing.T, register func(*grpc.Server), store *flakyStore) {
	t.Helper()
	conn := serveLoopback(t, register)
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: hclog.DefaultOutput}), Inbound: store.inbound, Invite: store.decide,
		InboundRetryFirst: 20 * time.Millisecond, InboundRetryMax: 80 * time.Millisecond})
	inst := newInstance(h, Spec{Instance: "fake"})
	plug := pluginclient.Wrap(conn)
	s, cancel, err := openStream(inst.ctx, plug)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- inst.pump(inst.ctx, plug, s, cancel) }()
	t.Cleanup(func() {
		inst.cancel()
		if err := <-done; err != nil {
			t.Errorf("pump: %v", err)
		}
	})
}

func waitStored(t *testing.T, store *flakyStore, ids ...string) {
	t.Helper()
	for _, id := range ids {
		sdktest.WaitFor(t, id+" stored", func() bool { return store.count(id) > 0 })
	}
}

// checkGaps asserts the failed Inbound calls are spaced by at least the
// backoff, which doubles from first up to max.
func checkGaps(t *testing.T, store *flakyStore, first, max time.Duration) {
	t.Helper()
	store.mu.Lock()
	calls := append([]time.Time(nil), store.calls...)
	store.mu.Unlock()
	want := first
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].Sub(calls[i-1]); gap < want {
			t.Errorf("failed store %d came %s after the previous one, want at least %s", i+1, gap, want)
		}
		want = min(want*2, max)
	}
}

// TestPumpNacksWhileStoreFails: while Inbound fails the batch is nacked
// with a delay that doubles (20, 40, 80, 80 ms), the store is not tried
// again before it passed, the stream stays open, every message is stored
// and acked once, and a stored batch resets the delay.
func TestPumpNacksWhileStoreFails(t *testing.T) {
	t.Parallel()
	fc := &nackingChannel{legacyChannel: newLegacyChannel()}
	store := &flakyStore{stored: map[string]int{}}
	store.failNext(4)
	fc.push(1)
	runPump(t, func(s *grpc.Server) { pb.RegisterChannelServiceServer(s, fc) }, store)
	waitStored(t, store, "m1")
	checkGaps(t, store, 20*time.Millisecond, 80*time.Millisecond)
	got := fc.retries()
	want := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, 80 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("nack delays %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("nack delays %v, want %v", got, want)
		}
	}

	// Success reset the backoff: the next failure waits the first delay.
	store.failNext(1)
	fc.push(2)
	waitStored(t, store, "m2")
	if got := fc.retries(); got[len(got)-1] != 20*time.Millisecond {
		t.Errorf("nack delays after a success %v: the last should be 20ms again", got)
	}
	if n := fc.streamCount(); n != 1 {
		t.Errorf("%d Receive streams; a Nack-capable plugin keeps its stream", n)
	}
	for _, id := range []string{"m1", "m2"} {
		if n := store.count(id); n != 1 {
			t.Errorf("%s stored %d times", id, n)
		}
	}
	// The ack follows the store (it crosses the gRPC stream): wait for it
	// rather than read at once (a loaded machine once read before it came).
	sdktest.WaitFor(t, "message 2 acked, nothing unacked", func() bool {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return fc.acked[2] >= 1 && len(fc.unacked) == 0
	})
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.acked[1] != 1 || fc.acked[2] != 1 || len(fc.unacked) != 0 {
		t.Errorf("acks %v, unacked %d; want 1 and 2 acked once", fc.acked, len(fc.unacked))
	}
}

// TestPumpEndsStreamForLegacyPlugin: a plugin that answers Nack with
// Unimplemented gets its stream ended instead; the pump opens a new one
// after the backoff and the plugin's redelivery is stored.
func TestPumpEndsStreamForLegacyPlugin(t *testing.T) {
	t.Parallel()
	fc := newLegacyChannel()
	store := &flakyStore{stored: map[string]int{}}
	store.failNext(3)
	fc.push(1)
	fc.push(2)
	runPump(t, func(s *grpc.Server) { pb.RegisterChannelServiceServer(s, fc) }, store)
	waitStored(t, store, "m1", "m2")
	checkGaps(t, store, 20*time.Millisecond, 80*time.Millisecond)
	if n := fc.streamCount(); n != 4 {
		t.Errorf("%d Receive streams, want 4 (the first and one after each of 3 failures)", n)
	}
	for _, id := range []string{"m1", "m2"} {
		if n := store.count(id); n != 1 {
			t.Errorf("%s stored %d times", id, n)
		}
	}
}

// failingAck is legacyChannel whose first Ack fails (a transport error).
type failingAck struct {
	*legacyChannel
	failed bool
}

func (f *failingAck) Ack(ctx context.Context, req *pb.AckRequest) (*pb.AckResponse, error) {
	f.mu.Lock()
	first := !f.failed
	f.failed = true
	f.mu.Unlock()
	if first {
		return nil, status.Error(codes.Internal, "ack lost")
	}
	return f.legacyChannel.Ack(ctx, req)
}

// TestPumpReopensStreamAfterFailedAck: a stored message whose Ack failed
// stays in flight at the plugin; the pump ends the stream, the plugin
// sends the message again on the next one, and that copy is acked (the
// real store reports it as a duplicate).
func TestPumpReopensStreamAfterFailedAck(t *testing.T) {
	t.Parallel()
	fc := &failingAck{legacyChannel: newLegacyChannel()}
	store := &flakyStore{stored: map[string]int{}}
	fc.push(1)
	runPump(t, func(s *grpc.Server) { pb.RegisterChannelServiceServer(s, fc) }, store)
	sdktest.WaitFor(t, "message 1 acked after the failed ack", func() bool {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return fc.acked[1] == 1
	})
	if n := fc.streamCount(); n != 2 {
		t.Errorf("%d Receive streams, want 2", n)
	}
	if n := store.count("m1"); n != 2 {
		t.Errorf("m1 reached the store %d times, want 2 (stored, then its redelivery)", n)
	}
}
