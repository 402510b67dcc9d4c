package delivery

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

// TestWarmCallsReuseAWorker: calls one after the other run on the
// workers already there (a call may come before the worker that ran the
// previous one waits again, and start another, up to warmWorkers), which
// end with the context.
func TestWarmCallsReuseAWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newWarmCalls(ctx)
	ran := 0
	for range 50 {
		w.do(func() { ran++ })
		if n := w.n.Load(); n < 1 || n > warmWorkers {
			t.Fatalf("%d workers after a call returned, want 1 to %d", n, warmWorkers)
		}
	}
	if ran != 50 {
		t.Fatalf("ran %d calls of 50", ran)
	}
	cancel()
	for w.n.Load() != 0 {
		runtime.Gosched() // the workers see the context's end
	}
	w.do(func() { ran++ }) // after the end: on the caller's goroutine
	if ran != 51 || w.n.Load() != 0 {
		t.Fatalf("a call after the end: ran %d, %d workers", ran, w.n.Load())
	}
}

// TestWarmCallsNeverQueue: with every worker busy, a call runs on its
// caller's goroutine at once instead of waiting behind another chat's.
func TestWarmCallsNeverQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWarmCalls(ctx)
	release := make(chan struct{})
	var started, busy sync.WaitGroup
	for range warmWorkers {
		started.Add(1)
		busy.Add(1)
		go w.do(func() { started.Done(); <-release; busy.Done() })
		started.Wait() // one at a time: each finds no idle worker and starts one
	}
	if n := w.n.Load(); n != warmWorkers {
		t.Fatalf("%d workers busy, want %d", n, warmWorkers)
	}
	inline := false
	w.do(func() { inline = true }) // returns although every worker is blocked
	if !inline {
		t.Fatal("the call did not run")
	}
	if n := w.n.Load(); n != warmWorkers {
		t.Fatalf("%d workers, want at most %d", n, warmWorkers)
	}
	close(release)
	busy.Wait()
}

// deep uses about 16 KB of stack: a plugin call's depth, roughly.
//
//go:noinline
func deep(n int) byte {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%256]
}

// BenchmarkWarmCalls: a deep call on a goroutine started for it (as the
// typing indicator's first call of each turn was) against one handed to a
// warm worker.
//
//	go test ./core/delivery -run '^$' -bench WarmCalls
func BenchmarkWarmCalls(b *testing.B) {
	b.Run("new-goroutine", func(b *testing.B) {
		for b.Loop() {
			done := make(chan struct{})
			go func() { deep(48); close(done) }()
			<-done
		}
	})
	b.Run("warm", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := newWarmCalls(ctx)
		for b.Loop() {
			done := make(chan struct{})
			go func() { w.do(func() { deep(48) }); close(done) }()
			<-done
		}
	})
}
