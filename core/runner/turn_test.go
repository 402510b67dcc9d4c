package runner

import (
	"testing"
	"time"
)

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
