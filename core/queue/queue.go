package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/recent"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// Item is an accepted journal entry entering the queue.
type Item struct {
	ID      int64
	Message message.Message
	// Raw is the message as the journal stores it (message.Encode), when
	// the caller has it; a turn started straight from the item reads it
	// instead of the journal.
	Raw []byte
	// Journaled is Raw decoded, when the caller has it: the message as
	// it was stored (Message may have been changed since, e.g. a button
	// press taken as its id typed). A turn started from the item uses it
	// instead of decoding Raw.
	Journaled *message.Message
}

// Runner is the turn stage as the queue drives it.
type Runner interface {
	// RunTurn runs one turn over b and delivers its reply. It calls
	// b.Start once the entries are handed to the agent.
	RunTurn(ctx context.Context, b *Batch) Status
	// Abort ends the session's running agent turn; false when none runs.
	Abort(key sessionkey.Key) bool
	// Steer injects messages into the session's running agent turn; false
	// when it could not (they are then queued as in Followup).
	Steer(key sessionkey.Key, items []Item) bool
}

// Status is what became of a turn the queue handed out.
type Status int

// Statuses.
const (
	// Ran: the batch was handled (answered, dropped or failed); the lane
	// goes on with the next entries.
	Ran Status = iota
	// Retry: a store failure kept the entries queued; the lane waits
	// (Options.Backoff) and tries again.
	Retry
	// Halt: the lane cannot go on (the entries' instance is gone, or the
	// host is stopping); the entries stay in the journal until a restart.
	Halt
)

// Observer receives the queue's measurements.
type Observer interface {
	SetQueueDepth(n int)
	Dropped(instance, reason string)
}

// Notifier tells a chat something outside any turn: that the cap dropped
// messages of its sender. Notify must not block (the composer sends in the
// background).
type Notifier interface {
	Notify(key sessionkey.Key, tgt message.Target, text string)
}

// Options configure a Queue.
type Options struct {
	Logger  hclog.Logger
	Journal store.Journal
	Runner  Runner
	// Observer may be nil.
	Observer Observer
	// Notifier may be nil: drops are then only logged and counted.
	Notifier Notifier
	Policy   Policy
	// SessionMode, when not nil, reads a session's own mode (its /queue),
	// "" for the policy's; ok false when it could not be read (it is asked
	// again next time). It is called outside the queue's lock; the queue
	// keeps what it read for the sessions active lately (SetSessionMode
	// replaces it).
	SessionMode func(key sessionkey.Key) (mode Mode, ok bool)
	// Backoff is how long a lane waits after a store failure; zero means 1 s.
	Backoff time.Duration
	// Seen, when not nil, is told of messages that arrived while a turn of
	// their session ran and did not interrupt it: queued behind it (ahead
	// is how many wait before them) or steered into it (ahead < 0). The
	// sender may be shown they were taken.
	Seen func(key sessionkey.Key, items []Item, ahead int)
}

// Queue runs each session's queued entries, one turn at a time, oldest
// first. All methods are safe for concurrent use.
type Queue struct {
	log     hclog.Logger
	journal store.Journal
	runner  Runner
	obs     Observer
	notify  Notifier
	seen    func(key sessionkey.Key, items []Item, ahead int)
	backoff time.Duration
	session func(key sessionkey.Key) (Mode, bool)
	// modes are the sessions' own modes read lately (SessionMode).
	modes *recent.Map[sessionkey.Key, Mode]

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queued atomic.Int64

	mu        sync.Mutex
	policy    Policy
	lanes     map[sessionkey.Key]*lane
	summaries map[sessionkey.Key][]string
	// toldCap holds the sessions whose chat was told of a cap drop since
	// their last turn started: one notice however often the cap strikes.
	toldCap map[sessionkey.Key]bool
}

// lane is a session's run state.
type lane struct {
	key     sessionkey.Key
	running bool // a goroutine is draining the queue
	dirty   bool // work was added since the goroutine last looked
	active  *Batch
	// batch maps entry ids a debounce window merged to the first id.
	batch map[int64]int64
	// waiting mirrors the session's queued journal entries, oldest first,
	// while known is set: the lane, the cap and the fast path read it
	// instead of the journal. It holds what Enqueue queued and drops what
	// the lane hands to a turn (a running entry is not waiting); anything else that changes the session's queue (entries
	// recovered or handed over, a direct turn put back, /stop, the cap, a
	// halted lane, a failed read) clears known, and the next look reads
	// the journal again. A lane is created known and empty: every queued
	// entry the queue did not put there itself comes with a Kick, and a
	// lane is removed only once its queue was seen empty.
	waiting []store.Entry
	known   bool
	// stale counts the changes made behind the mirror while known was
	// clear (entries Enqueue queued, forgets); adding counts the Enqueues
	// whose entries are queued in the journal, or about to be, and not yet
	// in the mirror. A read of the journal that raced with either is used
	// once, not kept: it may lack an entry, or hold one that its Enqueue
	// adds to the mirror after a turn already took it from the read (the
	// lane then ran it again, or stuck on it). A lane with adding is not
	// removed.
	stale  int
	adding int
	// unrouted holds entries an Enqueue could not queue (a store failure
	// part-way): still accepted in the journal, oldest first. The drain
	// queues them, retrying the store, before it reads the queue again:
	// nothing newer of the session runs ahead of them, and they do not
	// wait for a restart. A lane with unrouted entries is not removed.
	unrouted []int64
}

// New returns a Queue; lanes start on Enqueue or Kick.
func New(opts Options) *Queue {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Queue{
		log: opts.Logger.Named("queue"), journal: opts.Journal, runner: opts.Runner, obs: opts.Observer, notify: opts.Notifier, seen: opts.Seen, backoff: opts.Backoff, session: opts.SessionMode, modes: recent.New[sessionkey.Key, Mode](sessionModes),
		ctx: ctx, cancel: cancel, policy: opts.Policy.withDefaults(), lanes: map[sessionkey.Key]*lane{}, summaries: map[sessionkey.Key][]string{}, toldCap: map[sessionkey.Key]bool{},
	}
}

// modeFor is the mode of session key: its own (/queue), else the policy's
// for instance. Not under q.mu (SessionMode may read the store).
func (q *Queue) modeFor(pol Policy, key sessionkey.Key, instance string) Mode {
	if m := q.sessionMode(key); m != "" {
		return m
	}
	return pol.ModeFor(instance)
}

// sessionModes bounds the sessions whose own modes the queue keeps.
const sessionModes = 1024

// sessionMode is session key's own mode, read once (SessionMode) and then
// kept; "" for none.
func (q *Queue) sessionMode(key sessionkey.Key) Mode {
	if q.session == nil {
		return ""
	}
	if m, ok := q.modes.Get(key); ok {
		return m
	}
	m, ok := q.session(key)
	if ok {
		q.modes.Put(key, m)
	}
	return m
}

// SetSessionMode records that session key's own mode is now m (/queue;
// "" for the policy's).
func (q *Queue) SetSessionMode(key sessionkey.Key, m Mode) { q.modes.Put(key, m) }

// SetPolicy replaces the policy (on reload); waiting entries stay.
func (q *Queue) SetPolicy(p Policy) {
	q.mu.Lock()
	q.policy = p.withDefaults()
	q.mu.Unlock()
}

func (q *Queue) currentPolicy() Policy {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.policy
}

// Close stops the lanes after their running turns and waits for them (or
// ctx). Queued entries stay in the journal for the next start.
func (q *Queue) Close(ctx context.Context) {
	q.cancel()
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Context is cancelled when the queue closes; turns run under it.
func (q *Queue) Context() context.Context { return q.ctx }

func (q *Queue) lane(key sessionkey.Key) *lane {
	l := q.lanes[key]
	if l == nil {
		l = &lane{key: key, batch: map[int64]int64{}, known: true}
		q.lanes[key] = l
	}
	return l
}

// Recovered counts n entries found queued in the journal at start.
func (q *Queue) Recovered(n int) { q.add(n) }

func (q *Queue) add(n int) {
	q.obs.SetQueueDepth(int(max(q.queued.Add(int64(n)), 0)))
}

// Waiting is the number of entries waiting in session key's queue.
func (q *Queue) Waiting(key sessionkey.Key) int {
	q.mu.Lock()
	l := q.lanes[key]
	q.mu.Unlock()
	if l == nil {
		return 0
	}
	n, err := q.count(l)
	if err != nil {
		return 0
	}
	return n
}

// Depth is the number of entries waiting in session queues.
func (q *Queue) Depth() int { return int(max(q.queued.Load(), 0)) }

// Running reports whether a turn of the session is running.
func (q *Queue) Running(key sessionkey.Key) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.lanes[key]
	return l != nil && l.active != nil
}

// Enqueue puts a batch (one message, or the messages a debounce window
// merged, oldest first) in the session's queue, applies the mode against
// a running turn and the cap with its drop policy, and starts the lane.
func (q *Queue) Enqueue(key sessionkey.Key, items []Item) {
	if len(items) == 1 && q.startNow(key, items[0]) {
		return
	}
	// Until the entries are in the mirror (or steered), no read of the
	// journal is kept as the mirror (see lane.adding).
	q.mu.Lock()
	l := q.lane(key)
	l.adding++
	q.mu.Unlock()
	landed := false
	defer func() {
		if !landed {
			q.mu.Lock()
			l.adding--
			q.mu.Unlock()
		}
	}()
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	for i, id := range ids {
		if err := q.journal.Enqueue(q.ctx, id, key.String()); err != nil {
			q.failed(l, ids, i, err)
			return
		}
	}
	q.add(len(ids))
	pol := q.currentPolicy()
	instance := items[len(items)-1].Message.Instance
	q.mu.Lock()
	l.merge(ids)
	run := l.active
	q.mu.Unlock()
	var mode Mode
	if run != nil {
		mode = q.modeFor(pol, key, instance)
		switch mode {
		case Interrupt:
			q.Abort(key, "interrupted by a new message")
		case Steer:
			if q.steer(key, run, items, ids) {
				if q.seen != nil {
					q.seen(key, items, -1)
				}
				return
			}
		}
	}
	q.mu.Lock()
	l.wait(key, items)
	l.adding--
	landed = true
	q.mu.Unlock()
	q.applyCap(pol, key, instance)
	if run != nil && q.seen != nil && mode != Interrupt {
		n, _ := q.count(l)
		q.seen(key, items, max(n-len(items), 0))
	}
	q.kick(key, false)
}

// failed hands the lane what an Enqueue could not queue: ids[:i] are
// queued in the journal, ids[i:] still accepted (the store failed on
// ids[i]). The lane queues the rest, retrying the store, then runs them
// all in order, a debounced burst still as one turn; the mode (interrupt,
// steer) does not apply to them. Only a queue closing leaves them in the
// journal, accepted, for the next start to route.
func (q *Queue) failed(l *lane, ids []int64, i int, err error) {
	q.add(i)
	q.mu.Lock()
	defer q.mu.Unlock()
	l.merge(ids)
	l.unrouted = append(l.unrouted, ids[i:]...)
	l.forget() // the entries queued so far are not in the mirror
	l.dirty = true
	q.log.Error("enqueue failed; the session's lane queues the message once the store works", "session", l.key.String(), "id", ids[i], "error", err)
	if l.running || q.ctx.Err() != nil {
		return
	}
	l.running = true
	q.wg.Add(1)
	go q.drain(l, nil)
}

// merge records the entries of a debounced burst as one turn (q.mu held).
func (l *lane) merge(ids []int64) {
	if len(ids) < 2 {
		return
	}
	for _, id := range ids {
		l.batch[id] = ids[0]
	}
}

// wait adds items, just queued in the journal, to the mirror of the
// session's queue (q.mu held).
func (l *lane) wait(key sessionkey.Key, items []Item) {
	for _, it := range items {
		if !l.known || it.Raw == nil {
			l.forget()
			continue
		}
		m := &it.Message
		e := store.Entry{
			ID: it.ID, Instance: m.Instance, ChatID: m.ChatID, ThreadID: m.ThreadID, MessageID: m.MessageID,
			ReceivedAt: m.ReceivedAt, Message: it.Raw, State: store.StateQueued, SessionKey: key.String(),
		}
		// Oldest first, as the journal lists them: an entry is nearly
		// always the newest.
		i := len(l.waiting)
		for i > 0 && l.waiting[i-1].ID > e.ID {
			i--
		}
		l.waiting = slices.Insert(l.waiting, i, e)
	}
}

// forget makes the next look at the session's queue read the journal;
// a read under way is not kept.
func (l *lane) forget() {
	l.known = false
	l.waiting = nil
	l.stale++
}

// took removes the entries of a batch handed to a turn from the mirror.
func (l *lane) took(b *Batch) {
	if !l.known {
		return
	}
	l.waiting = slices.DeleteFunc(l.waiting, func(e store.Entry) bool {
		return slices.ContainsFunc(b.Entries, func(x store.Entry) bool { return x.ID == e.ID })
	})
}

// steer injects items into the running turn; its reply then answers them.
func (q *Queue) steer(key sessionkey.Key, run *Batch, items []Item, ids []int64) bool {
	if !q.runner.Steer(key, items) {
		return false
	}
	if err := q.journal.Start(q.ctx, ids...); err != nil {
		// Left queued they would wait, out of the mirror, for a restart
		// that runs them again: they are started once the store works.
		q.log.Error("journal start of steered messages failed; trying again", "session", key.String(), "ids", ids, "error", err)
		q.wg.Add(1)
		go q.startSteered(key, ids)
	} else {
		q.add(-len(ids))
	}
	run.mu.Lock()
	run.steered = append(run.steered, ids...)
	run.mu.Unlock()
	q.log.Debug("message steered into the running turn", "session", key.String(), "ids", ids)
	return true
}

// startSteered starts steered entries whose start failed, retrying the
// store until it works or the queue closes (they then stay queued for the
// next start). Ones a lane started meanwhile are left as they are.
func (q *Queue) startSteered(key sessionkey.Key, ids []int64) {
	defer q.wg.Done()
	for {
		q.wait()
		if q.ctx.Err() != nil {
			return
		}
		err := q.journal.Start(q.ctx, ids...)
		switch {
		case err == nil:
			q.add(-len(ids))
			return
		case errors.Is(err, store.ErrBadTransition) || errors.Is(err, store.ErrNotFound):
			return
		}
		q.log.Error("journal start of steered messages failed; trying again", "session", key.String(), "ids", ids, "error", err)
	}
}

// Abort ends the session's running turn, if any, recording why.
func (q *Queue) Abort(key sessionkey.Key, reason string) bool {
	q.mu.Lock()
	var run *Batch
	if l := q.lanes[key]; l != nil {
		run = l.active
	}
	q.mu.Unlock()
	if run == nil {
		return false
	}
	run.mu.Lock()
	if run.reason == "" {
		run.reason = reason
	}
	run.mu.Unlock()
	return q.runner.Abort(key)
}

// Clear drops every waiting entry of the session and its summaries (for
// /stop); it returns how many were dropped.
func (q *Queue) Clear(key sessionkey.Key, reason string) int {
	pending, _ := q.journal.ListPending(q.ctx, key.String(), 0)
	ids := make([]int64, len(pending))
	for i, e := range pending {
		ids[i] = e.ID
	}
	q.finish(ids, store.StateDropped, reason)
	q.add(-len(ids))
	q.mu.Lock()
	if l := q.lanes[key]; l != nil {
		l.forget()
	}
	delete(q.summaries, key)
	delete(q.toldCap, key)
	q.mu.Unlock()
	return len(ids)
}

func (q *Queue) finish(ids []int64, state store.State, reason string) {
	if len(ids) == 0 {
		return
	}
	if err := q.journal.Finish(q.ctx, store.FinishRequest{IDs: ids, State: state, Reason: reason}); err != nil && q.ctx.Err() == nil {
		q.log.Error("journal finish failed", "ids", ids, "state", state, "error", err)
	}
}

type nopObserver struct{}

func (nopObserver) SetQueueDepth(int)      {}
func (nopObserver) Dropped(string, string) {}
