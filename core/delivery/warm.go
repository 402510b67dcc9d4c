package delivery

import (
	"context"
	"sync/atomic"
)

// warmWorkers bounds the goroutines a warmCalls keeps.
const warmWorkers = 4

// warmCalls runs plugin calls on a few goroutines that live as long as the
// dispatcher, instead of on a goroutine started for one turn. A call to a
// plugin goes deep (gRPC, the message's reflective marshalling) and a new
// goroutine starts with a small stack: the turn's typing goroutine grew
// its stack two or three times at every turn's first SetTyping, each time
// copying it frame by frame (runtime.copystack, about 0.1 ms of the host's
// CPU a warm turn in a profile of BenchmarkOutboundTelegram). A worker's
// stack, once grown, stays grown.
//
// A call finds an idle worker, or starts one while fewer than warmWorkers
// run, or else runs on its caller's goroutine as before: never queued
// behind another chat's call. The workers end with ctx.
//
// sdk/internal/wire's warmPool is its twin on the plugins' side (there a
// call is handed off, here the caller waits for it). The sdk is a module
// of its own whose internal packages the core cannot import, and a worker
// pool is not the sdk's to export to plugin authors, so each keeps its
// own 50 lines.
type warmCalls struct {
	ctx  context.Context
	jobs chan warmJob
	n    atomic.Int32 // workers running
}

// warmJob is one call handed to a worker; done is closed when it returned.
type warmJob struct {
	f    func()
	done chan struct{}
}

func newWarmCalls(ctx context.Context) *warmCalls {
	return &warmCalls{ctx: ctx, jobs: make(chan warmJob)}
}

// do runs f and returns when it has returned.
func (w *warmCalls) do(f func()) {
	if w.ctx.Err() != nil {
		f()
		return
	}
	j := warmJob{f: f, done: make(chan struct{})}
	select {
	case w.jobs <- j:
	default:
		if w.n.Add(1) > warmWorkers {
			w.n.Add(-1)
			f()
			return
		}
		go w.work(j)
	}
	<-j.done
}

// work runs first, then every job handed to it until ctx ends.
func (w *warmCalls) work(first warmJob) {
	defer w.n.Add(-1)
	for j := first; ; {
		j.f()
		close(j.done)
		select {
		case j = <-w.jobs:
		case <-w.ctx.Done():
			return
		}
	}
}
