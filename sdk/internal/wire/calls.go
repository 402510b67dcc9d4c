package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
)

// Calls implements ChannelService: the host's Send, Ack, SetTyping, Edit
// and React on one stream (proto/PROTOCOL.md, "The call stream"). Each
// call runs as its unary twin would, concurrently with the others (Ack,
// which only marks deliveries done, inline; the others on warm goroutines,
// see warmPool), with a context that ends at
// the call's timeout, at the host's cancel of it, or with the stream; its
// result is written as soon as it is ready. When the stream ends the calls
// still running are canceled, and the handler returns once they have.
func (srv *Server) Calls(stream grpc.BidiStreamingServer[pb.Call, pb.CallResult]) error {
	if srv.NoCallStream {
		return status.Error(codes.Unimplemented, "method Calls not implemented")
	}
	ctx := stream.Context()
	var (
		wmu     sync.Mutex // one writer at a time
		mu      sync.Mutex
		running = make(map[uint64]context.CancelFunc)
		wg      sync.WaitGroup
		workers = newWarmPool(ctx)
	)
	reply := func(r *pb.CallResult) {
		wmu.Lock()
		// A failed write means the stream has ended: Recv says so.
		_ = stream.Send(r)
		wmu.Unlock()
	}
	defer func() {
		mu.Lock()
		for _, cancel := range running {
			cancel()
		}
		mu.Unlock()
		wg.Wait()
	}()
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		id := c.GetId()
		switch op := c.GetOp().(type) {
		case *pb.Call_Cancel:
			mu.Lock()
			if cancel := running[id]; cancel != nil {
				cancel()
			}
			mu.Unlock()
			continue
		case *pb.Call_Ack:
			srv.Inbox.Ack(op.Ack.GetDeliveryIds())
			reply(&pb.CallResult{Id: id, Result: &pb.CallResult_Ack{Ack: &pb.AckResponse{}}})
			continue
		}
		var cctx context.Context
		var cancel context.CancelFunc
		if ms := c.GetTimeoutMs(); ms > 0 {
			cctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		} else {
			cctx, cancel = context.WithCancel(ctx)
		}
		mu.Lock()
		running[id] = cancel
		mu.Unlock()
		wg.Add(1)
		workers.Go(func() {
			defer wg.Done()
			r := srv.call(cctx, c)
			mu.Lock()
			delete(running, id)
			mu.Unlock()
			cancel()
			reply(r)
		})
	}
}

// call runs one call of the stream as the unary handler of its operation
// and returns its result; a panic becomes an Internal status, as
// RecoverUnary makes it for a unary call.
func (srv *Server) call(ctx context.Context, c *pb.Call) (r *pb.CallResult) {
	r = &pb.CallResult{Id: c.GetId()}
	defer func() {
		if p := recover(); p != nil {
			srv.Log.Error("panic in plugin handler", "method", callsMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r.Result, r.Code, r.Message = nil, int32(codes.Internal), fmt.Sprintf("plugin panicked in %s: %v", callsMethod, p)
		}
	}()
	var err error
	switch op := c.GetOp().(type) {
	case *pb.Call_Send:
		var res *pb.SendResponse
		res, err = srv.Send(ctx, op.Send)
		r.Result = &pb.CallResult_Send{Send: res}
	case *pb.Call_SetTyping:
		var res *pb.SetTypingResponse
		res, err = srv.SetTyping(ctx, op.SetTyping)
		r.Result = &pb.CallResult_SetTyping{SetTyping: res}
	case *pb.Call_Edit:
		var res *pb.EditResponse
		res, err = srv.Edit(ctx, op.Edit)
		r.Result = &pb.CallResult_Edit{Edit: res}
	case *pb.Call_React:
		var res *pb.ReactResponse
		res, err = srv.React(ctx, op.React)
		r.Result = &pb.CallResult_React{React: res}
	default:
		err = status.Errorf(codes.Unimplemented, "call %d: no operation this plugin serves", c.GetId())
	}
	if err != nil {
		st, _ := status.FromError(err)
		r.Result, r.Code, r.Message = nil, int32(st.Code()), st.Message()
	}
	return r
}
