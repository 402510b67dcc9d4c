package queue

import (
	"context"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Batch is what one turn runs: entries of one session, oldest first.
type Batch struct {
	Key     string
	Entries []store.Entry
	// Collected: several waiting messages merged by Collect mode.
	Collected bool
	// Summaries are one-line summaries of messages the cap dropped, for the
	// turn's prompt.
	Summaries []string

	q       *Queue
	mu      sync.Mutex
	steered []int64
	reason  string
}

// IDs returns the ids of the batch's entries.
func (b *Batch) IDs() []int64 {
	ids := make([]int64, len(b.Entries))
	for i, e := range b.Entries {
		ids[i] = e.ID
	}
	return ids
}

// Start marks the entries as handed to the agent (journal processing);
// they are no longer waiting.
func (b *Batch) Start(ctx context.Context) error {
	if err := b.q.journal.Start(ctx, b.IDs()...); err != nil {
		return err
	}
	b.q.add(-len(b.Entries))
	return nil
}

// Covers returns the entries the turn's reply answers besides the first:
// the rest of the batch and the messages steered into the run.
func (b *Batch) Covers() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append(b.IDs()[1:], b.steered...)
}

// AbortReason says why the turn was aborted; empty when it was not.
func (b *Batch) AbortReason() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason
}

// Kick makes the session's lane look at its queue (after Enqueue, or for
// entries recovered from the journal).
func (q *Queue) Kick(key string) {
	q.mu.Lock()
	l := q.lane(key)
	l.dirty = true
	start := !l.running && q.ctx.Err() == nil
	if start {
		l.running = true
		q.wg.Add(1)
	}
	q.mu.Unlock()
	if start {
		go q.drain(l)
	}
}

// drain runs the lane's queued entries, oldest first, until none is left.
func (q *Queue) drain(l *lane) {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		l.dirty = false
		q.mu.Unlock()
		pending, err := q.pending(l.key)
		if len(pending) == 0 {
			if q.idle(l, err) {
				return
			}
			continue
		}
		b := q.pick(l, pending)
		q.mu.Lock()
		l.active = b
		q.mu.Unlock()
		st := q.runner.RunTurn(q.ctx, b)
		q.mu.Lock()
		l.active = nil
		// A halted lane stops, unless it was kicked meanwhile: the kick
		// may bring what it lacked (a restarted instance).
		halt := st == Halt && (!l.dirty || q.ctx.Err() != nil)
		if halt {
			l.running = false
		}
		q.mu.Unlock()
		switch {
		case halt:
			return
		case st == Retry:
			q.wait()
		}
	}
}

// pending lists the session's queue; nil once the queue is closing.
func (q *Queue) pending(key string) ([]store.Entry, error) {
	if q.ctx.Err() != nil {
		return nil, nil
	}
	pending, err := q.journal.ListPending(q.ctx, key, 0)
	if err != nil && q.ctx.Err() == nil {
		q.log.Error("reading the session queue failed", "session", key, "error", err)
	}
	return pending, err
}

// idle ends the lane when nothing was added meanwhile; it reports whether
// the drain goroutine should return.
func (q *Queue) idle(l *lane, err error) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if l.dirty && q.ctx.Err() == nil && err == nil {
		return false
	}
	l.running = false
	if l.active == nil && len(l.batch) == 0 {
		delete(q.lanes, l.key)
	}
	return true
}

// pick chooses the entries of the next turn: in collect mode everything
// waiting; otherwise the oldest entry and the entries its debounce window
// merged with it.
func (q *Queue) pick(l *lane, pending []store.Entry) *Batch {
	b := &Batch{Key: l.key, q: q}
	mode := q.modeFor(q.currentPolicy(), l.key, pending[0].Instance)
	q.mu.Lock()
	defer q.mu.Unlock()
	b.Summaries = q.summaries[l.key]
	delete(q.summaries, l.key)
	delete(q.toldCap, l.key)
	if mode == Collect {
		// Everything waiting from the first one's chat: one reply answers
		// them there. Messages of another chat sharing the session (a
		// "main" dm_scope across channels) wait for their own turn, so
		// each chat gets its answer.
		first := pending[0]
		var take []store.Entry
		for _, e := range pending {
			if e.Instance == first.Instance && e.ChatID == first.ChatID && e.ThreadID == first.ThreadID {
				take = append(take, e)
			}
		}
		b.Entries, b.Collected = take, len(take) > 1
		return b
	}
	head, ok := l.batch[pending[0].ID]
	if !ok {
		b.Entries = pending[:1]
		return b
	}
	for _, e := range pending {
		if l.batch[e.ID] == head {
			b.Entries = append(b.Entries, e)
			delete(l.batch, e.ID)
		}
	}
	return b
}

// wait pauses a lane after a store failure (or until the queue closes).
func (q *Queue) wait() {
	t := time.NewTimer(q.backoff)
	defer t.Stop()
	select {
	case <-q.ctx.Done():
	case <-t.C:
	}
}
