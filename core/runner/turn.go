package runner

import (
	"sync"
	"time"
)

// Turn is a running turn. Read Events until it is closed, or call Wait.
type Turn struct {
	key string

	mu      sync.Mutex
	pending []Event
	ended   bool
	// forwarding: a forward goroutine is handing pending to out (it
	// closes out once the turn ended and pending is empty).
	forwarding bool
	out        chan Event
	// text is when the first assistant text was read (guarded by mu; zero before).
	text time.Time
	// begun: EventBegan was sent (guarded by mu).
	begun bool

	abortOnce sync.Once
	abortCh   chan struct{}
	abortKind ErrorKind

	done chan struct{}
	res  Result

	// settled is closed by Settle (or Wait): the caller is done with the
	// turn's reply.
	settled    chan struct{}
	settleOnce sync.Once

	// steering lets Runner.Steer write to the process running the turn.
	steering steering
}

// outBuffer is how many events Events holds before a reader takes them;
// more wait in Turn.pending, handed over by a forward goroutine.
const outBuffer = 16

func newTurn(key string) *Turn {
	return &Turn{key: key, out: make(chan Event, outBuffer), abortCh: make(chan struct{}), done: make(chan struct{}), settled: make(chan struct{})}
}

// Events yields the turn's events in order; the last is EventResult, then the channel is
// closed. The runner never waits for the reader: events are queued without bound.
func (t *Turn) Events() <-chan Event { return t.out }

// Wait blocks until the turn ends and returns its Result. Events not yet received are
// discarded, so call it after draining Events or instead of reading them; a permission
// question among them is denied (nobody reading them could answer it).
func (t *Turn) Wait() Result {
	for e := range t.out {
		if e.Kind == EventPermission {
			e.Permission.Answer(Decision{Message: "Nobody can answer this question here, so this tool use is denied."})
		}
	}
	<-t.done
	t.Settle() // nothing of the turn is delivered by the runner's caller after this
	return t.res
}

// Settle tells the runner that the caller is done with the turn's reply: it was
// recorded and handed to the chat. What the turn leaves for later, the agent's next
// spare claude, is started then, not while the reply is on its way: on a host that runs
// its Go code on one processor while light (core/internal/procpace), a start's few
// milliseconds of work would otherwise come before the reply's send. A turn never
// settled starts that work settleLimit after its end. Wait settles the turn itself;
// calling Settle more than once is harmless.
func (t *Turn) Settle() { t.settleOnce.Do(func() { close(t.settled) }) }

// Done is closed when the turn has ended (its Result is final).
func (t *Turn) Done() <-chan struct{} { return t.done }

// emit queues e. It never blocks: while nothing is pending, e goes
// straight into out's buffer, so the reader gets it with no goroutine in
// between (a turn's result reaches the reply's path one hand-over
// sooner); behind pending events, or with the buffer full, e is pending
// and a forward goroutine hands it over in order.
func (t *Turn) emit(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return // Events is closed, or about to be: a late event is dropped, not sent on a closed channel
	}
	if t.text.IsZero() && (e.Kind == EventText || e.Kind == EventTextDelta) {
		t.text = e.At
	}
	if !t.forwarding {
		select {
		case t.out <- e:
			return
		default:
		}
		t.forwarding = true
		go t.forward()
	}
	t.pending = append(t.pending, e)
}

// began sends EventBegan, once per turn: claude wrote its first line of the
// turn, so it read the prompt. A relaunch within the turn (a warm process
// that died) does not send it again.
func (t *Turn) began(at time.Time) {
	t.mu.Lock()
	first := !t.begun
	t.begun = true
	t.mu.Unlock()
	if first {
		t.emit(Event{Kind: EventBegan, At: at})
	}
}

// forward hands the pending events to out in order; it returns when none
// is left, closing out when the turn has ended.
func (t *Turn) forward() {
	for {
		t.mu.Lock()
		if len(t.pending) == 0 {
			t.forwarding = false
			if t.ended {
				close(t.out)
			}
			t.mu.Unlock()
			return
		}
		e := t.pending[0]
		t.pending = t.pending[1:]
		t.mu.Unlock()
		t.out <- e
	}
}

// firstText is when the turn's first assistant text was read, zero when none was.
func (t *Turn) firstText() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.text
}

func (t *Turn) finish(res Result) {
	t.res = res
	close(t.done)
	r := res
	t.emit(Event{Kind: EventResult, Result: &r, At: time.Now()})
	t.mu.Lock()
	t.ended = true
	if !t.forwarding {
		close(t.out) // else forward closes it after the last event
	}
	t.mu.Unlock()
}

func (t *Turn) abort(kind ErrorKind) {
	t.abortOnce.Do(func() {
		t.abortKind = kind
		close(t.abortCh)
	})
}

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

// StreamedTurn returns a Turn that is fed as it runs, by an agent that
// does not drive the claude CLI (a relay to a backend that streams) or a
// test faking the Agent a Turn is consumed by: emit queues an event (it
// never blocks; an EventResult is not for emit), finish ends the turn
// with res (once, after the last emit). Like FinishedTurn's, the Turn has
// no key and no process: nothing can abort or steer it.
func StreamedTurn() (t *Turn, emit func(Event), finish func(Result)) {
	t = newTurn("")
	emit = func(e Event) {
		if e.At.IsZero() {
			e.At = time.Now()
		}
		t.emit(e)
	}
	return t, emit, t.finish
}
