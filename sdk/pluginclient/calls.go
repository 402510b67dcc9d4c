package pluginclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
)

// The hot calls (Send, Ack, SetTyping, Edit, React) travel on one
// long-lived Calls stream per connection when the plugin declares
// call_stream (proto/PROTOCOL.md, "The call stream"): a unary call costs
// an HTTP/2 stream of its own (headers, the secret's metadata, trailers,
// a frame more each way), a call on the stream one message each way.
//
// A call fails as its unary twin does. One never written to the stream
// (no stream could be opened, or it had ended) is made as a unary call
// instead, which then fails, or not, exactly as before, ErrNotSent
// included. One written whose result does not come before the stream
// breaks may have been done: it is mapErr of the stream's status,
// ErrPluginExited for a plugin that died, never ErrNotSent. A plugin that
// declares the stream but answers it UNIMPLEMENTED ran none of the calls
// on it: they, and every later call, go unary.

// Stream states of calls.mode.
const (
	modeUnary   int32 = iota // the plugin did not declare call_stream (yet)
	modeStream               // it did: calls go on the stream
	modeRefused              // it answered the stream UNIMPLEMENTED: unary for good
)

// calls is the host's end of the Calls stream of one connection: the
// stream in use (opened at the first call, again at the first call after
// it broke) and the ids of calls.
type calls struct {
	ch   pb.ChannelServiceClient
	mode atomic.Int32
	next atomic.Uint64

	mu  sync.Mutex
	cur *link // nil: none open
}

// link is one opened Calls stream and the calls waiting for its results.
type link struct {
	st  grpc.BidiStreamingClient[pb.Call, pb.CallResult]
	end context.CancelFunc

	wmu sync.Mutex // one writer at a time (gRPC's rule for SendMsg)

	mu      sync.Mutex
	waiting map[uint64]*waiter
	err     error // why the stream ended; set once, then nothing registers
	answers bool  // a result came: the plugin serves the stream
}

// waiter is one call waiting for its result: exactly one value is sent on
// done per registration, by whoever removed it from link.waiting.
type waiter struct {
	done chan struct{}
	res  *pb.CallResult
	err  error // the stream's end, when res is nil
}

var waiters = sync.Pool{New: func() any { return &waiter{done: make(chan struct{}, 1)} }}

// errUnary: make the call as a unary call (it was not written).
var errUnary = errors.New("call not written to the call stream")

// use turns the stream on when the plugin declares it (Describe), unless
// it refused it already.
func (c *calls) use(declared bool) {
	if declared {
		c.mode.CompareAndSwap(modeUnary, modeStream)
	}
}

// do makes call on the stream and returns its result, or errUnary when the
// call should be made unary (the stream is not in use, or the call was not
// written). Any other error is the call's failure, mapped by mapErr with
// op. A result with a status code is returned as that status's error.
func (c *calls) do(ctx context.Context, op string, call *pb.Call) (*pb.CallResult, error) {
	if c.mode.Load() != modeStream {
		return nil, errUnary
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	l, err := c.link(ctx)
	if err != nil {
		return nil, errUnary
	}
	call.Id = c.next.Add(1)
	if dl, ok := ctx.Deadline(); ok {
		// Rounded up: a deadline under a millisecond is not "none".
		call.TimeoutMs = max(1, (time.Until(dl) + time.Millisecond - 1).Milliseconds())
	}
	w := waiters.Get().(*waiter)
	if !l.register(call.Id, w) {
		waiters.Put(w)
		return nil, errUnary
	}
	l.wmu.Lock()
	err = l.st.Send(call)
	l.wmu.Unlock()
	if err != nil {
		// Not queued on the connection (gRPC fails a write only on a
		// stream that has ended): the plugin cannot have seen it.
		if !l.unregister(call.Id) {
			<-w.done
		}
		w.reset()
		return nil, errUnary
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		if l.unregister(call.Id) {
			l.cancel(call.Id)
			w.reset()
			return nil, fmt.Errorf("%s: %w", op, ctx.Err())
		}
		<-w.done // the result (or the stream's end) is being handed over
	}
	res, serr := w.res, w.err
	w.reset()
	if res == nil {
		if grpcstatus.Code(serr) == codes.Unimplemented {
			return nil, errUnary
		}
		if errors.Is(serr, io.EOF) {
			return nil, fmt.Errorf("%s: %w: call stream closed", op, ErrPluginExited)
		}
		return nil, mapErr(op, serr)
	}
	if code := codes.Code(res.GetCode()); code != codes.OK {
		return nil, mapErr(op, grpcstatus.Error(code, res.GetMessage()))
	}
	return res, nil
}

// reset empties w and puts it back in the pool.
func (w *waiter) reset() {
	w.res, w.err = nil, nil
	waiters.Put(w)
}

// link returns the open stream, opening one if none is. callCtx is the
// context of the call that needs it, which bounds only the opening.
func (c *calls) link(callCtx context.Context) (*link, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil {
		return c.cur, nil
	}
	// The stream lives as long as the connection (or until it breaks),
	// not as long as the call that happens to open it; but that call's
	// end, while gRPC waits for a connection to open it on, gives up.
	ctx, end := context.WithCancel(context.Background())
	stop := context.AfterFunc(callCtx, end)
	st, err := c.ch.Calls(ctx)
	if !stop() && err == nil {
		err = callCtx.Err() // end ran: the new stream is canceled
	}
	if err != nil {
		end()
		return nil, err
	}
	l := &link{st: st, end: end, waiting: make(map[uint64]*waiter)}
	c.cur = l
	go c.receive(l)
	return l, nil
}

// receive hands each result to its waiter until the stream ends, then
// fails every call still waiting with the stream's end.
func (c *calls) receive(l *link) {
	for {
		r, err := l.st.Recv()
		if err != nil {
			c.ended(l, err)
			return
		}
		l.mu.Lock()
		l.answers = true
		w := l.waiting[r.GetId()]
		delete(l.waiting, r.GetId())
		l.mu.Unlock()
		if w != nil { // nil: a call its caller gave up on
			w.res = r
			w.done <- struct{}{}
		}
	}
}

// ended records the end of l: later calls open a new stream (or, if the
// plugin refused this one, go unary), and the calls waiting on l fail.
func (c *calls) ended(l *link, err error) {
	l.end()
	c.mu.Lock()
	if c.cur == l {
		c.cur = nil
	}
	c.mu.Unlock()
	l.mu.Lock()
	l.err = err
	if !l.answers && grpcstatus.Code(err) == codes.Unimplemented {
		c.mode.Store(modeRefused)
	}
	waiting := l.waiting
	l.waiting = nil
	l.mu.Unlock()
	for _, w := range waiting {
		w.err = err
		w.done <- struct{}{}
	}
}

// register adds w as the waiter of id; false when the stream has ended.
func (l *link) register(id uint64, w *waiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false
	}
	l.waiting[id] = w
	return true
}

// unregister removes the waiter of id and reports whether it was still
// there (false: its result or the stream's end is on its way to it).
func (l *link) unregister(id uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.waiting[id]; !ok {
		return false
	}
	delete(l.waiting, id)
	return true
}

// cancel tells the plugin that nobody waits for call id any more, as a
// unary call's cancellation does. Best effort: a stream that has ended
// has no call to cancel.
func (l *link) cancel(id uint64) {
	l.wmu.Lock()
	_ = l.st.Send(&pb.Call{Id: id, Op: &pb.Call_Cancel{Cancel: true}})
	l.wmu.Unlock()
}

// errNoResult is the error of a result without the operation's response
// (a plugin that answered with the wrong one).
func errNoResult(op string) error {
	return fmt.Errorf("%s: %s: the plugin answered the call without its result", op, codes.Internal)
}
