package runner

import (
	"strconv"
	"testing"
	"time"
)

// afterBegan returns the turn's first event after EventBegan, which must
// come first.
func afterBegan(tu *Turn) Event {
	if ev := <-tu.Events(); ev.Kind != EventBegan {
		return ev
	}
	return <-tu.Events()
}

func TestFinishedTurn(t *testing.T) {
	res := Result{Text: "done", Usage: Usage{InputTokens: 3, OutputTokens: 1}}
	tu := FinishedTurn(res, Event{Kind: EventText, Text: "one"}, Event{Kind: EventToolUse, Tool: &ToolUse{Name: "Bash"}})
	select {
	case <-tu.Done():
	default:
		t.Fatal("Done is not closed")
	}
	var kinds []EventKind
	var last Event
	timeout := time.After(5 * time.Second)
	for open := true; open; {
		select {
		case e, ok := <-tu.Events():
			if !ok {
				open = false
				break
			}
			if e.At.IsZero() {
				t.Errorf("event %v has no time", e.Kind)
			}
			kinds = append(kinds, e.Kind)
			last = e
		case <-timeout:
			t.Fatalf("Events not closed; got %v", kinds)
		}
	}
	want := []EventKind{EventText, EventToolUse, EventResult}
	if len(kinds) != len(want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds = %v, want %v", kinds, want)
		}
	}
	if last.Result == nil || last.Result.Text != "done" || last.Result.Usage.OutputTokens != 1 {
		t.Fatalf("result event = %+v", last.Result)
	}
	if got := tu.Wait(); got.Text != "done" || got.Err != nil {
		t.Fatalf("Wait = %+v", got)
	}

	// Wait without reading Events, and a turn without events.
	if got := FinishedTurn(Result{Err: newError(KindCrash, "x")}).Wait(); got.Err == nil || got.Err.Kind != KindCrash {
		t.Fatalf("Wait = %+v", got)
	}
}

// TestTurnEventsInOrder: events reach Events in the order emitted and the
// result comes last, then the channel closes, whether the reader keeps up
// (events go straight into the channel's buffer) or lags behind it
// (events wait in pending for a forward goroutine), and across the switch
// between the two.
func TestTurnEventsInOrder(t *testing.T) {
	t.Parallel()
	tu, emit, finish := StreamedTurn()
	const n = 10 * outBuffer
	got := make(chan []string, 1)
	step := make(chan int)
	go func() {
		var texts []string
		// Reads in bursts at the emitter's pace: a burst of k events is
		// read once step says k.
		for k := range step {
			for range k {
				texts = append(texts, (<-tu.Events()).Text)
			}
		}
		for e := range tu.Events() {
			if e.Kind == EventResult {
				texts = append(texts, "result:"+e.Result.Text)
				continue
			}
			texts = append(texts, e.Text)
		}
		got <- texts
	}()
	i := 0
	next := func(k int) {
		for range k {
			emit(Event{Kind: EventText, Text: strconv.Itoa(i)})
			i++
		}
	}
	next(3) // read at once: the direct path
	step <- 3
	next(3 * outBuffer) // the buffer full: pending behind it
	step <- outBuffer
	next(5)
	step <- 2*outBuffer + 5
	next(n - i) // the rest, read after the result
	close(step)
	finish(Result{Text: "done"})
	texts := <-got
	if len(texts) != n+1 || texts[n] != "result:done" {
		t.Fatalf("%d events, last %q; want %d and the result last", len(texts), texts[len(texts)-1], n+1)
	}
	for k := range n {
		if texts[k] != strconv.Itoa(k) {
			t.Fatalf("event %d is %q: out of order", k, texts[k])
		}
	}
}

// TestTurnEventAfterItsEndIsDropped: an event that comes after the turn
// ended (a reader still running when the turn gave up on it) is dropped;
// with Events written straight into its buffer, it would be sent on the
// closed channel and panic the host.
func TestTurnEventAfterItsEndIsDropped(t *testing.T) {
	tr := newTurn("k")
	tr.finish(Result{})
	tr.emit(Event{Kind: EventText, Text: "late"})
	var kinds []EventKind
	for e := range tr.Events() {
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) != 1 || kinds[0] != EventResult {
		t.Fatalf("events %v, want the result alone", kinds)
	}
}
