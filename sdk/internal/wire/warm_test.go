package wire

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

// TestWarmPoolNeverQueues: with every worker busy a call still runs at
// once, on a goroutine of its own; calls after that go to the workers,
// which end with the context.
func TestWarmPoolNeverQueues(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := newWarmPool(ctx)
	release := make(chan struct{})
	var started, finished sync.WaitGroup
	for range warmWorkers + 2 {
		started.Add(1)
		finished.Add(1)
		p.Go(func() { started.Done(); <-release; finished.Done() })
	}
	started.Wait() // all of them run together: none waited for a worker
	if p.n != warmWorkers {
		t.Fatalf("%d workers, want %d", p.n, warmWorkers)
	}
	close(release)
	finished.Wait()
	for range 20 {
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
	}
	if p.n != warmWorkers {
		t.Fatalf("%d workers after more calls, want %d", p.n, warmWorkers)
	}
	base := runtime.NumGoroutine()
	cancel()
	for runtime.NumGoroutine() > base-warmWorkers {
		runtime.Gosched() // the workers see the context's end
	}
}
