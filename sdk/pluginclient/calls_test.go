package pluginclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// streamChannel is a plugin's ChannelService that serves the call stream
// only (a unary call answers UNIMPLEMENTED, so a call that did not go on
// the stream shows). It records every call and answers those answer
// returns a result for; end, when it returns an error for a call, ends
// the stream with it after the answer.
type streamChannel struct {
	pb.UnimplementedChannelServiceServer
	calls  chan *pb.Call
	opened atomic.Int32
	answer func(*pb.Call) *pb.CallResult
	end    func(*pb.Call) error
}

func newStreamChannel(answer func(*pb.Call) *pb.CallResult) *streamChannel {
	return &streamChannel{calls: make(chan *pb.Call, 100), answer: answer}
}

func (s *streamChannel) Calls(st grpc.BidiStreamingServer[pb.Call, pb.CallResult]) error {
	s.opened.Add(1)
	for {
		c, err := st.Recv()
		if err != nil {
			return err
		}
		s.calls <- c
		if r := s.answer(c); r != nil {
			if err := st.Send(r); err != nil {
				return err
			}
		}
		if s.end != nil {
			if err := s.end(c); err != nil {
				return err
			}
		}
	}
}

// answerAll answers every call as a plugin that succeeds does.
func answerAll(c *pb.Call) *pb.CallResult {
	r := &pb.CallResult{Id: c.GetId()}
	switch c.GetOp().(type) {
	case *pb.Call_Send:
		r.Result = &pb.CallResult_Send{Send: &pb.SendResponse{MessageIds: []string{fmt.Sprintf("m%d", c.GetId())}}}
	case *pb.Call_Ack:
		r.Result = &pb.CallResult_Ack{Ack: &pb.AckResponse{}}
	case *pb.Call_SetTyping:
		r.Result = &pb.CallResult_SetTyping{SetTyping: &pb.SetTypingResponse{}}
	case *pb.Call_Edit:
		r.Result = &pb.CallResult_Edit{Edit: &pb.EditResponse{Error: &pb.PluginError{Code: "forbidden", Message: "not yours"}}}
	case *pb.Call_React:
		r.Result = &pb.CallResult_React{React: &pb.ReactResponse{}}
	default:
		return nil
	}
	return r
}

// serveStream serves ch on loopback and returns a Plugin that uses the
// call stream (as after a Describe that declared it) and the server.
func serveStream(t *testing.T, ch pb.ChannelServiceServer) (*Plugin, *grpc.Server) {
	t.Helper()
	ln := listen(t)
	srv := grpc.NewServer()
	pb.RegisterChannelServiceServer(srv, ch)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	p := dial(t, ln.Addr().String())
	p.calls.use(true)
	return p, srv
}

// TestCallStreamCarriesCalls: with the stream declared, Send, Ack,
// SetTyping, Edit and React go on one stream, with their results and
// business errors as the unary calls return them, and a deadline travels
// as timeout_ms.
func TestCallStreamCarriesCalls(t *testing.T) {
	t.Parallel()
	ch := newStreamChannel(answerAll)
	p, _ := serveStream(t, ch)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi"})
	if err != nil || len(res.MessageIDs) != 1 {
		t.Fatalf("send: %v, %v", res, err)
	}
	if c := <-ch.calls; c.GetSend().GetText() != "hi" || c.GetTimeoutMs() <= 0 || c.GetTimeoutMs() > 30_000 {
		t.Errorf("send call %v: want the text and timeout_ms in (0, 30000]", c)
	}
	if err := p.Ack(ctx, 7, 8); err != nil {
		t.Errorf("ack: %v", err)
	}
	if c := <-ch.calls; len(c.GetAck().GetDeliveryIds()) != 2 {
		t.Errorf("ack call %v", c)
	}
	if err := p.SetTyping(context.Background(), channel.TypingRequest{ChatID: "1", On: true}); err != nil {
		t.Errorf("set typing: %v", err)
	}
	if c := <-ch.calls; !c.GetSetTyping().GetOn() || c.GetTimeoutMs() != 0 {
		t.Errorf("set typing call %v: want on, no timeout", c)
	}
	if err := p.Edit(ctx, channel.EditRequest{ChatID: "1", MessageID: "2", Text: "x"}); channel.CodeOf(err) != channel.CodeForbidden {
		t.Errorf("edit: %v, want the plugin's forbidden", err)
	}
	<-ch.calls
	if err := p.React(ctx, channel.ReactRequest{ChatID: "1", MessageID: "2", Emoji: "👍"}); err != nil {
		t.Errorf("react: %v", err)
	}
	if n := ch.opened.Load(); n != 1 {
		t.Errorf("%d streams opened, want 1", n)
	}
}

// TestCallStreamPluginDiesDuringCalls: calls the plugin received and died
// during may have been done: each fails with ErrPluginExited and none is
// ErrNotSent, as a unary call the plugin died during
// (TestSendDuringPluginDeathIsNotNotSent).
func TestCallStreamPluginDiesDuringCalls(t *testing.T) {
	t.Parallel()
	ch := newStreamChannel(func(*pb.Call) *pb.CallResult { return nil })
	p, srv := serveStream(t, ch)
	const n = 5
	errc := make(chan error, n)
	for i := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: fmt.Sprint(i)})
			errc <- err
		}()
	}
	for range n {
		<-ch.calls
	}
	srv.Stop() // closes the connection under the calls
	for range n {
		err := <-errc
		if !errors.Is(err, ErrPluginExited) || errors.Is(err, ErrNotSent) {
			t.Errorf("send the plugin died during: %v (exited %v, not sent %v), want exited only", err, errors.Is(err, ErrPluginExited), errors.Is(err, ErrNotSent))
		}
	}
}

// TestCallStreamCancel: a caller that gives up gets its context's error at
// once, and the plugin is told to cancel that call.
func TestCallStreamCancel(t *testing.T) {
	t.Parallel()
	ch := newStreamChannel(func(*pb.Call) *pb.CallResult { return nil })
	p, _ := serveStream(t, ch)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi"})
		errc <- err
	}()
	c := <-ch.calls
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled send: %v, want context.Canceled", err)
	}
	if got := <-ch.calls; !got.GetCancel() || got.GetId() != c.GetId() {
		t.Fatalf("after the cancel the plugin got %v, want a cancel of call %d", got, c.GetId())
	}
}

// TestCallStreamReopens: after a stream ended, the next call opens another.
func TestCallStreamReopens(t *testing.T) {
	t.Parallel()
	ch := newStreamChannel(answerAll)
	ch.end = func(*pb.Call) error { return grpcstatus.Error(codes.Unavailable, "stream ends") }
	p, _ := serveStream(t, ch)
	ctx := context.Background()
	if _, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "one"}); err != nil {
		t.Fatalf("first send: %v", err)
	}
	// Wait until the host saw the end (a call written before it would
	// fail as one the plugin may have done).
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		p.calls.mu.Lock()
		ended := p.calls.cur == nil
		p.calls.mu.Unlock()
		if ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the host did not see the stream end")
		}
	}
	if _, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "two"}); err != nil {
		t.Fatalf("second send: %v", err)
	}
	if n := ch.opened.Load(); n != 2 {
		t.Errorf("%d streams opened, want 2", n)
	}
}

// unaryChannel serves Send unary only, as a plugin built before the stream.
type unaryChannel struct {
	pb.UnimplementedChannelServiceServer
	sends atomic.Int32
}

func (u *unaryChannel) Send(context.Context, *pb.SendRequest) (*pb.SendResponse, error) {
	u.sends.Add(1)
	return &pb.SendResponse{MessageIds: []string{"u"}}, nil
}

// TestCallStreamRefusedGoesUnary: a plugin that declared the stream but
// answers it UNIMPLEMENTED ran nothing on it: the call is made unary, and
// so is every later one.
func TestCallStreamRefusedGoesUnary(t *testing.T) {
	t.Parallel()
	u := &unaryChannel{}
	p, _ := serveStream(t, u)
	for i := range 2 {
		res, err := p.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "hi"})
		if err != nil || len(res.MessageIDs) != 1 || res.MessageIDs[0] != "u" {
			t.Fatalf("send %d: %v, %v", i, res, err)
		}
	}
	if u.sends.Load() != 2 || p.calls.mode.Load() != modeRefused {
		t.Fatalf("%d unary sends, mode %d; want 2 and refused", u.sends.Load(), p.calls.mode.Load())
	}
}

// TestCallStreamUndeclaredIsUnary: a plugin that does not declare the
// stream (every plugin before it) gets unary calls only.
func TestCallStreamUndeclaredIsUnary(t *testing.T) {
	t.Parallel()
	ln := listen(t)
	srv := grpc.NewServer()
	u := &unaryChannel{}
	pb.RegisterChannelServiceServer(srv, u)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	p := dial(t, ln.Addr().String())
	p.calls.use(false)
	if _, err := p.Send(context.Background(), channel.SendRequest{ChatID: "1", Text: "hi"}); err != nil || u.sends.Load() != 1 {
		t.Fatalf("send: %v, %d unary sends", err, u.sends.Load())
	}
}

// TestCallStreamOpenHonoursDeadline: the call that opens the stream on a
// connection gRPC is still setting up (the plugin accepted the socket and
// says nothing) ends at its deadline, as a unary call does, not at gRPC's
// 20 s connect timeout.
func TestCallStreamOpenHonoursDeadline(t *testing.T) {
	t.Parallel()
	ln := listen(t)
	acceptEach(ln, func(c net.Conn) { t.Cleanup(func() { _ = c.Close() }) })
	p := dial(t, ln.Addr().String())
	p.calls.use(true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 10*time.Second {
		t.Fatalf("send to a silent plugin: %v after %s, want its deadline", err, time.Since(t0))
	}
}
