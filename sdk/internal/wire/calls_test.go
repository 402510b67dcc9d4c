package wire

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// stuckChannel's SetTyping waits for its context to end and reports how it
// ended and whether it had a deadline; its Edit panics; React answers.
type stuckChannel struct {
	recordingChannel
	typing chan typingEnd
}

type typingEnd struct {
	err         error
	hadDeadline bool
}

func (c *stuckChannel) SetTyping(ctx context.Context, _ channel.TypingRequest) error {
	<-ctx.Done()
	_, dl := ctx.Deadline()
	c.typing <- typingEnd{ctx.Err(), dl}
	return ctx.Err()
}

func (c *stuckChannel) Edit(context.Context, channel.EditRequest) error {
	panic("edit panics on purpose")
}

func (c *stuckChannel) React(context.Context, channel.ReactRequest) error { return nil }

// openCalls serves ch with secret and opens a Calls stream on a connection
// that authenticates, with opts.
func openCalls(t *testing.T, ch channel.Channel, secret string, opts ...grpc.DialOption) (*Server, grpc.BidiStreamingClient[pb.Call, pb.CallResult]) {
	t.Helper()
	t.Setenv(envSocketDir, t.TempDir())
	srv := newTestServer(t, &Impl{Name: "calls", Channel: ch})
	srv.Secret = secret
	s, err := Serve(srv, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	conn := dial(t, s, append([]grpc.DialOption{grpc.WithPerRPCCredentials(Credentials{Secret: secret})}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := pb.NewChannelServiceClient(conn).Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return srv, st
}

// TestCallsRunConcurrently: a call that blocks does not hold up the others
// (Ack and React answer meanwhile); a call ends at its timeout_ms and at
// the host's cancel; a panic is an INTERNAL result and the stream goes on.
func TestCallsRunConcurrently(t *testing.T) {
	ch := &stuckChannel{typing: make(chan typingEnd, 2)}
	_, st := openCalls(t, ch, NewSecret())
	send := func(c *pb.Call) {
		t.Helper()
		if err := st.Send(c); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() *pb.CallResult {
		t.Helper()
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	send(&pb.Call{Id: 1, Op: &pb.Call_SetTyping{SetTyping: &pb.SetTypingRequest{ChatId: "c", On: true}}})
	send(&pb.Call{Id: 2, TimeoutMs: 50, Op: &pb.Call_SetTyping{SetTyping: &pb.SetTypingRequest{ChatId: "c", On: true}}})
	send(&pb.Call{Id: 3, Op: &pb.Call_Ack{Ack: &pb.AckRequest{DeliveryIds: []uint64{9}}}})
	send(&pb.Call{Id: 4, Op: &pb.Call_React{React: &pb.ReactRequest{ChatId: "c", MessageId: "m", Emoji: "👍"}}})
	send(&pb.Call{Id: 5, Op: &pb.Call_Edit{Edit: &pb.EditRequest{ChatId: "c", MessageId: "m"}}})
	got := map[uint64]*pb.CallResult{}
	for len(got) < 4 { // 3, 4, 5 and 2 (its timeout); 1 waits
		r := recv()
		got[r.GetId()] = r
	}
	if got[3].GetAck() == nil || got[4].GetReact() == nil || got[4].GetReact().GetError() != nil {
		t.Errorf("ack %v, react %v: want both answered", got[3], got[4])
	}
	if codes.Code(got[5].GetCode()) != codes.Internal || got[5].GetResult() != nil {
		t.Errorf("panicking edit: %v, want INTERNAL and no result", got[5])
	}
	if e := <-ch.typing; e.err != context.DeadlineExceeded || !e.hadDeadline {
		t.Errorf("call with timeout_ms ended with %v (deadline %v), want its deadline", e.err, e.hadDeadline)
	}
	if _, ok := got[1]; ok {
		t.Fatalf("call 1 answered before it ended: %v", got[1])
	}
	send(&pb.Call{Id: 1, Op: &pb.Call_Cancel{Cancel: true}})
	if e := <-ch.typing; e.err != context.Canceled || e.hadDeadline {
		t.Errorf("canceled call ended with %v (deadline %v), want canceled without a deadline", e.err, e.hadDeadline)
	}
	if r := recv(); r.GetId() != 1 {
		t.Errorf("after the cancel: %v, want call 1's result", r)
	}
}

// TestCallsSendNeedsGrants: a Send on the stream is checked for media
// grants as a unary one is, and the host's SignStream grants them.
func TestCallsSendNeedsGrants(t *testing.T) {
	secret := NewSecret()
	path := filepath.Join(t.TempDir(), "reply.txt")
	sendWith := func(st grpc.BidiStreamingClient[pb.Call, pb.CallResult]) *pb.SendResponse {
		t.Helper()
		if err := st.Send(&pb.Call{Id: 1, Op: &pb.Call_Send{Send: &pb.SendRequest{ChatId: "c", Media: []*pb.OutboundMedia{{Path: path}}}}}); err != nil {
			t.Fatal(err)
		}
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return r.GetSend()
	}
	rec := &recordingChannel{}
	_, raw := openCalls(t, rec, secret)
	if res := sendWith(raw); channel.Code(res.GetError().GetCode()) != channel.CodeMediaNotGranted {
		t.Errorf("ungranted send on the stream: %v, want %s", res, channel.CodeMediaNotGranted)
	}
	if _, sent := rec.calls(); len(sent) != 0 {
		t.Fatalf("the channel got the ungranted send")
	}
	_, signed := openCalls(t, rec, secret, grpc.WithStreamInterceptor(SignStream(secret)))
	if res := sendWith(signed); res.GetError() != nil || len(res.GetMessageIds()) != 1 {
		t.Errorf("send on the host's stream: %v, want sent", res)
	}
}

// TestCallsDeclared: a configured channel declares the stream; with
// NoCallStream (a plugin before it, for the host's tests) it neither
// declares nor serves it.
func TestCallsDeclared(t *testing.T) {
	srv := newTestServer(t, &Impl{Name: "calls", Channel: &recordingChannel{}})
	ctx := context.Background()
	if _, err := srv.Configure(ctx, &pb.ConfigureRequest{Instance: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, off := range []bool{false, true} {
		srv.NoCallStream = off
		r, err := srv.Describe(ctx, &pb.DescribeRequest{})
		if err != nil || r.GetChannel().GetCallStream() == off {
			t.Errorf("NoCallStream %v: describe %v %v", off, r.GetChannel(), err)
		}
	}
	if err := srv.Calls(nil); status.Code(err) != codes.Unimplemented {
		t.Errorf("Calls with NoCallStream: %v, want UNIMPLEMENTED", err)
	}
}
