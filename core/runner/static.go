package runner

import "time"

// FinishedTurn returns a Turn that has already ended with res: its Events
// channel yields events in order, then an EventResult carrying res, and is
// then closed; Done is closed and Wait returns res at once.
//
// It is for agents that do not drive the claude CLI (a canned answer, a
// relay to another backend) and for tests that fake the Agent a Turn is
// consumed by. events should not contain an EventResult (the final one is
// added); an event with a zero At gets the time of the call. The Turn has
// no key and no process: nothing can abort or steer it.
func FinishedTurn(res Result, events ...Event) *Turn {
	t := newTurn("")
	now := time.Now()
	for _, e := range events {
		if e.At.IsZero() {
			e.At = now
		}
		t.emit(e)
	}
	t.finish(res)
	return t
}
