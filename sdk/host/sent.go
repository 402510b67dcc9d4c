package host

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// A call that failed may or may not have reached the plugin; a caller about
// to repeat a send must know which. gRPC's messages do not say it reliably
// (a connection that broke while it was being set up fails the calls
// waiting for it with whatever the socket said, e.g. a bare "write: broken
// pipe"), but gRPC does tell a stats handler when a call's headers were
// queued on an established connection (stats.OutHeader): a call without
// them never left the host. sentTracker is that handler, installed by
// DialOptions; a call that carries a callMark (see track) records in it
// whether it got that far.

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
// the handler (a connection not made with DialOptions) nothing is known.
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

// mapCallErr is mapErr for a tracked call: a plugin-exited error of a call
// that never reached the plugin is also ErrNotSent.
func mapCallErr(op string, err error, m *callMark) error {
	err = mapErr(op, err)
	if err != nil && m.neverSent() && errors.Is(err, ErrPluginExited) && !errors.Is(err, ErrNotSent) {
		return fmt.Errorf("%w (%w)", err, ErrNotSent)
	}
	return err
}
