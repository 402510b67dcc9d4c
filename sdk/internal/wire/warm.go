package wire

import "context"

// warmWorkers bounds the goroutines a stream's warmPool keeps.
const warmWorkers = 4

// warmPool runs a call stream's calls on goroutines that outlive one call.
// A call goes deep (the channel's HTTP client, the result's reflective
// marshalling) and a goroutine started for it begins with a small stack
// that grows two or three times, copied frame by frame each time
// (runtime.copystack) — at every Send and SetTyping. A worker's stack,
// once grown, stays grown.
//
// A call goes to an idle worker, or to a new one while fewer than
// warmWorkers run, or else to a goroutine of its own as before: never
// queued behind another call. Go is called only by the stream's receive
// loop; the workers end with ctx (the stream's).
//
// core/delivery's warmCalls is its twin in the host (see there why two).
type warmPool struct {
	ctx  context.Context
	jobs chan func()
	n    int
}

func newWarmPool(ctx context.Context) *warmPool {
	return &warmPool{ctx: ctx, jobs: make(chan func())}
}

// Go runs f on another goroutine.
func (p *warmPool) Go(f func()) {
	select {
	case p.jobs <- f:
		return
	default:
	}
	if p.n < warmWorkers {
		p.n++
		go p.work(f)
		return
	}
	go f()
}

// work runs f, then every call handed to it until ctx ends.
func (p *warmPool) work(f func()) {
	for {
		f()
		select {
		case f = <-p.jobs:
		case <-p.ctx.Done():
			return
		}
	}
}
