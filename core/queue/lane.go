package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// Batch is what one turn runs: entries of one session, oldest first.
type Batch struct {
	Key     sessionkey.Key
	Entries []store.Entry
	// Messages are the entries' messages, decoded, when the queue has
	// them (a batch started straight from Enqueue's item); nil when the
	// entries were read from the journal.
	Messages []message.Message
	// Collected: several waiting messages merged by Collect mode.
	Collected bool
	// Summaries are one-line summaries of messages the cap dropped, for the
	// turn's prompt.
	Summaries []string

	q       *Queue
	mu      sync.Mutex
	steered []int64
	reason  string
	// direct: the batch was started from Enqueue's item, not read from
	// the journal; its entry is still accepted there (see startNow).
	direct bool
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
	if b.direct {
		// Routed and started in one write (see startNow).
		return b.q.journal.Begin(ctx, b.Key.String(), b.IDs()...)
	}
	if err := b.q.journal.Start(ctx, b.IDs()...); err != nil {
		return err
	}
	b.q.add(-len(b.Entries))
	return nil
}

// Began records that the turn's run truly began (claude read the prompt):
// an interruption from now on spends the entries' attempts.
func (b *Batch) Began(ctx context.Context) error {
	return b.q.journal.MarkBegan(ctx, b.IDs()...)
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

// Kick makes the session's lane look at its queue in the journal: for
// entries recovered or handed over, which the queue did not put there.
func (q *Queue) Kick(key sessionkey.Key) { q.kick(key, true) }

// kick starts the session's lane, or makes a running one look again;
// reread: the session's queue changed behind the lane's mirror.
func (q *Queue) kick(key sessionkey.Key, reread bool) {
	q.mu.Lock()
	l := q.lane(key)
	if reread {
		l.forget()
	}
	l.dirty = true
	start := !l.running && q.ctx.Err() == nil
	if start {
		l.running = true
		q.wg.Add(1)
	}
	q.mu.Unlock()
	if start {
		go q.drain(l, nil)
	}
}

// startNow is the fast path of Enqueue for one message to a session with
// nothing running and nothing waiting (the common case: a chat writes, the
// bot answers): its turn starts from the item in hand. The entry is not
// moved to queued first and the lane does not read it back from the
// journal: Begin routes it and moves it from accepted to processing in one
// write, so one commit, not two, and no read stand between the message and
// claude. Should anything keep the turn from starting (a store failure:
// Retry), the entry is enqueued then and the lane goes on as usual; a
// restart before the start finds it accepted and routes it again, one
// after it finds it back in its session's queue.
//
// It reports false, having done nothing, when the lane is busy or the
// session has entries waiting: they go first.
func (q *Queue) startNow(key sessionkey.Key, it Item) bool {
	if it.Raw == nil {
		return false
	}
	q.mu.Lock()
	l := q.lane(key)
	ok := !l.running && q.ctx.Err() == nil
	if ok {
		l.running = true
		q.wg.Add(1)
	}
	q.mu.Unlock()
	if !ok {
		return false
	}
	// The lane is this call's now: a Kick meanwhile only marks it dirty,
	// and the drain below looks again. Nothing is waiting anywhere when the
	// queue's count says so (it counts every entry it queued or recovered
	// until it starts or drops it); else the session's queue is looked at.
	if q.queued.Load() > 0 {
		if n, err := q.count(l); err != nil || n > 0 {
			go q.drain(l, nil)
			return false
		}
	}
	m := &it.Message
	b := &Batch{Key: key, q: q, direct: true, Entries: []store.Entry{{
		ID: it.ID, Instance: m.Instance, ChatID: m.ChatID, ThreadID: m.ThreadID, MessageID: m.MessageID,
		ReceivedAt: m.ReceivedAt, Message: it.Raw, State: store.StateAccepted, SessionKey: key.String(),
	}}}
	if it.Journaled != nil {
		b.Messages = []message.Message{*it.Journaled}
	}
	q.mu.Lock()
	b.Summaries = q.summaries[key]
	delete(q.summaries, key)
	delete(q.toldCap, key)
	q.mu.Unlock()
	go q.drain(l, b)
	return true
}

// drain runs the lane's queued entries, oldest first, until none is left;
// first, when not nil, before them (see startNow).
func (q *Queue) drain(l *lane, first *Batch) {
	defer q.wg.Done()
	if first != nil {
		q.mu.Lock()
		l.active = first
		q.mu.Unlock()
		st := q.runner.RunTurn(q.ctx, first)
		q.mu.Lock()
		l.active = nil
		q.mu.Unlock()
		if st != Ran {
			// The turn did not start (a store failure, or the host is
			// stopping): the entry joins the session's queue as any
			// other, or stays accepted for the next start.
			if st == Retry {
				q.wait()
			}
			q.requeue(first)
		}
	}
	for {
		q.mu.Lock()
		l.dirty = false
		unrouted := l.unrouted
		l.unrouted = nil
		q.mu.Unlock()
		if len(unrouted) > 0 {
			q.route(l, unrouted)
			continue
		}
		pending, err := q.pending(l)
		if err != nil && q.ctx.Err() == nil {
			// The store failed: the lane reads again after the backoff
			// rather than stop with entries queued and nothing to run
			// them until the session's next message.
			q.wait()
			continue
		}
		q.mu.Lock()
		late := len(l.unrouted) > 0
		q.mu.Unlock()
		if late {
			continue // an Enqueue failed meanwhile: its entries come first
		}
		if len(pending) == 0 {
			if q.idle(l, err) {
				return
			}
			continue
		}
		b := q.pick(l, pending)
		q.mu.Lock()
		l.active = b
		l.took(b) // handed out: no longer waiting (the cap, "N ahead")
		q.mu.Unlock()
		st := q.runner.RunTurn(q.ctx, b)
		q.mu.Lock()
		l.active = nil
		switch st {
		case Halt, Retry:
			// After a failure the journal says what still waits: a
			// mirror that went wrong (an entry in it no longer queued,
			// whose start the journal refuses) is not retried for ever
			// with the entries behind it.
			l.forget()
		}
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

// requeue puts the entries of a direct batch that did not run in the
// session's queue (accepted → queued), retrying a failing store until it
// works or the queue closes; the lane then runs them as usual. An entry
// that started meanwhile (Start committed, the turn then failed to go on)
// is not moved back: the journal refuses it, and a restart recovers it.
func (q *Queue) requeue(b *Batch) {
	for _, e := range b.Entries {
		if q.enqueue(b.Key, e.ID) {
			q.add(1)
		}
	}
	q.mu.Lock()
	l := q.lanes[b.Key]
	if l != nil {
		l.dirty = true
		l.forget()
	}
	q.mu.Unlock()
}

// enqueue queues an accepted entry in session key's queue, retrying a
// failing store until it works or the queue closes (the entry then stays
// accepted: the next start routes it). It reports whether it queued the
// entry; one that started or ended meanwhile is not moved back.
func (q *Queue) enqueue(key sessionkey.Key, id int64) bool {
	for q.ctx.Err() == nil {
		err := q.journal.Enqueue(q.ctx, id, key.String())
		if err == nil {
			return true
		}
		if errors.Is(err, store.ErrBadTransition) || errors.Is(err, store.ErrNotFound) {
			return false
		}
		q.log.Error("enqueue failed; trying again", "session", key.String(), "id", id, "error", err)
		q.wait()
	}
	return false
}

// route queues, in order, the entries an Enqueue could not (see
// Queue.failed); the lane then reads its queue from the journal. Once the
// queue closes the rest stay accepted, for the next start to route.
func (q *Queue) route(l *lane, ids []int64) {
	q.wait() // the store failed a moment ago
	for _, id := range ids {
		ok := q.enqueue(l.key, id)
		if ok {
			q.add(1)
		}
		q.mu.Lock()
		if !ok {
			delete(l.batch, id)
		}
		l.forget()
		q.mu.Unlock()
	}
}

// pending lists the session's queue, from the lane's mirror when it is
// known, else from the journal; nil once the queue is closing.
func (q *Queue) pending(l *lane) ([]store.Entry, error) {
	if q.ctx.Err() != nil {
		return nil, nil
	}
	q.mu.Lock()
	if l.known {
		pending := slices.Clone(l.waiting)
		q.mu.Unlock()
		return pending, nil
	}
	stale, adding := l.stale, l.adding
	q.mu.Unlock()
	pending, err := q.journal.ListPending(q.ctx, l.key.String(), 0)
	if err != nil {
		if q.ctx.Err() == nil {
			q.log.Error("reading the session queue failed", "session", l.key.String(), "error", err)
		}
		return nil, err
	}
	q.mu.Lock()
	// Kept as the mirror unless the session's queue changed behind it
	// meanwhile or an Enqueue was under way (see lane.adding): it is then
	// read again next time.
	if !l.known && l.stale == stale && adding == 0 && l.adding == 0 {
		l.waiting, l.known = slices.Clone(pending), true
	}
	q.mu.Unlock()
	return pending, nil
}

// count is the number of entries waiting in the lane's session queue.
func (q *Queue) count(l *lane) (int, error) {
	q.mu.Lock()
	if l.known {
		n := len(l.waiting)
		q.mu.Unlock()
		return n, nil
	}
	q.mu.Unlock()
	return q.journal.CountPending(q.ctx, l.key.String())
}

// idle ends the lane when nothing was added meanwhile; it reports whether
// the drain goroutine should return. A lane stopped by the queue closing
// stays (not known), so that a new lane never hides entries the journal
// still holds for the session (a failed read is retried: see drain); so
// does one whose queue was not seen empty (the read that found nothing
// was not kept: an Enqueue overtook
// it, its entry may be queued in the journal and its kick still to come,
// and the kick's drain reads the journal again; a new lane would start
// known and empty, and the entry stayed queued with no lane to run it,
// TestIdleKeepsALaneARacingEnqueueQueuedInto).
func (q *Queue) idle(l *lane, err error) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	// An Enqueue may have added to the mirror after the drain looked and
	// before its kick marks the lane dirty: the lane goes on rather than
	// being removed with them (a new lane would start known and empty).
	if (l.dirty || l.known && len(l.waiting) > 0 || len(l.unrouted) > 0) && q.ctx.Err() == nil && err == nil {
		return false
	}
	l.running = false
	if err != nil || q.ctx.Err() != nil {
		l.forget()
		return true
	}
	if l.known && l.adding == 0 && l.active == nil && len(l.batch) == 0 && len(l.unrouted) == 0 {
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
