package tstimetest

import (
	"github.com/clawhost/clawhost/core/internal/tstime"
	"testing"
	"time"
)

var start = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestFakeTimerFiresOnlyWhenAdvancedPastIt(t *testing.T) {
	f := NewFake(start)
	tm, c := f.NewTimer(10 * time.Second)
	f.Advance(9 * time.Second)
	select {
	case <-c:
		t.Fatal("fired early")
	default:
	}
	f.Advance(time.Second)
	if got := <-c; !got.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("fired at %v", got)
	}
	if tm.Stop() {
		t.Fatal("Stop of a fired timer reported pending")
	}
	if f.Waiters() != 0 {
		t.Fatalf("%d waiters left", f.Waiters())
	}
}

func TestFakeTickerTicksAtEachPeriodAndDropsUnread(t *testing.T) {
	f := NewFake(start)
	tk, c := f.NewTicker(time.Second)
	f.Advance(3 * time.Second) // three ticks; the channel holds one
	if got := <-c; !got.Equal(start.Add(time.Second)) {
		t.Fatalf("first tick at %v", got)
	}
	select {
	case <-c:
		t.Fatal("unread ticks were kept")
	default:
	}
	f.Advance(time.Second)
	if got := <-c; !got.Equal(start.Add(4 * time.Second)) {
		t.Fatalf("tick at %v", got)
	}
	tk.Reset(10 * time.Second)
	f.Advance(9 * time.Second)
	select {
	case <-c:
		t.Fatal("reset ticker ticked early")
	default:
	}
	tk.Stop()
	f.Advance(time.Hour)
	select {
	case <-c:
		t.Fatal("stopped ticker ticked")
	default:
	}
}

func TestFakeAfterFuncInOrderAndStop(t *testing.T) {
	f := NewFake(start)
	got := make(chan int, 3)
	f.AfterFunc(2*time.Second, func() { got <- 2 })
	f.AfterFunc(time.Second, func() { got <- 1 })
	stopped := f.AfterFunc(time.Second, func() { got <- 9 })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending call reported not pending")
	}
	f.Advance(time.Second)
	if v := <-got; v != 1 {
		t.Fatalf("first call %d", v)
	}
	f.Advance(time.Second)
	if v := <-got; v != 2 {
		t.Fatalf("second call %d", v)
	}
	if !f.Now().Equal(start.Add(2 * time.Second)) {
		t.Fatalf("now %v", f.Now())
	}
}

func TestFakeBlockUntilWaitsForTheCodeToArm(t *testing.T) {
	f := NewFake(start)
	fired := make(chan struct{})
	go func() {
		<-f.After(time.Minute)
		close(fired)
	}()
	if !f.BlockUntil(1, 10*time.Second) {
		t.Fatal("the goroutine never armed its timer")
	}
	if f.BlockUntil(2, time.Millisecond) {
		t.Fatal("BlockUntil(2) returned true with one waiter")
	}
	f.Advance(time.Minute)
	<-fired
}

func TestZeroDurationFiresAtOnce(t *testing.T) {
	f := NewFake(start)
	select {
	case <-f.After(0):
	default:
		t.Fatal("After(0) did not fire at once")
	}
	var f2 tstime.Clock = f
	if tstime.Or(f2) != f2 {
		t.Fatal("Or replaced a clock")
	}
}
