package pluginclient

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
)

// A call that failed may or may not have reached the plugin; a caller about
// to repeat a send must know which. gRPC's messages do not say it reliably
// (a connection that broke while it was being set up fails the calls
// waiting for it with whatever the socket said, e.g. a bare "write: broken
// pipe"), but gRPC does tell a stats handler when a call's headers were
// queued on an established connection (stats.OutHeader): a call without
// them never left the host. DialOptions installs sentTracker (that handler)
// and unsentInterceptor, which marks each unary call (track) and returns
// the error of one that never left the host as neverSent; mapErr makes it
// ErrNotSent.

type callMarkKey struct{}

// callMark records how far one call got.
type callMark struct {
	tagged atomic.Bool // the stats handler saw the call (it is installed)
	onWire atomic.Bool // the call's headers were queued on a connection
}

// track returns ctx carrying a new callMark for the call made with it.
func track(ctx context.Context) (context.Context, *callMark) {
	m := &callMark{}
	return context.WithValue(ctx, callMarkKey{}, m), m
}

// neverSent reports whether the marked call certainly did not reach the
// plugin: the handler saw it and no headers were queued for it. Without
// the handler nothing is known.
func (m *callMark) neverSent() bool {
	return m.tagged.Load() && !m.onWire.Load()
}

// sentTracker is the stats.Handler behind callMark.
type sentTracker struct{}

func (sentTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	if m, ok := ctx.Value(callMarkKey{}).(*callMark); ok {
		m.tagged.Store(true)
	}
	return ctx
}

func (sentTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.OutHeader); !ok {
		return
	}
	if m, ok := ctx.Value(callMarkKey{}).(*callMark); ok {
		m.onWire.Store(true)
	}
}

func (sentTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (sentTracker) HandleConn(context.Context, stats.ConnStats) {}

// unsentInterceptor marks every unary call and wraps the error of one that
// never left the host in neverSent.
func unsentInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	ctx, m := track(ctx)
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err != nil && m.neverSent() {
		return neverSent{err}
	}
	return err
}

// neverSent is the gRPC error of a call that never left the host; its
// status is the call's.
type neverSent struct{ error }

func (e neverSent) Unwrap() error { return e.error }

func (e neverSent) GRPCStatus() *grpcstatus.Status {
	st, _ := grpcstatus.FromError(e.error)
	return st
}
