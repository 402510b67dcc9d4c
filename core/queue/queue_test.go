package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
	"github.com/clawhost/clawhost/sdk/channel"
)

// The queue's rules run in-process against the real SQLite journal and a
// recording runner that holds each turn until the test releases it.

type turnCall struct {
	b    *Batch
	done chan Status
}

type recRunner struct {
	turns   chan turnCall
	mu      sync.Mutex
	aborts  []string
	steer   bool
	steered [][]Item
}

func newRecRunner() *recRunner { return &recRunner{turns: make(chan turnCall)} }

func (r *recRunner) RunTurn(ctx context.Context, b *Batch) Status {
	c := turnCall{b: b, done: make(chan Status)}
	select {
	case r.turns <- c:
	case <-ctx.Done():
		return Halt
	}
	return <-c.done
}

func (r *recRunner) Abort(key sessionkey.Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.aborts = append(r.aborts, key.Chat)
	return true
}

func (r *recRunner) Steer(key sessionkey.Key, items []Item) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.steer {
		r.steered = append(r.steered, items)
	}
	return r.steer
}

// next waits for the lane to hand out a turn (bounded).
func (r *recRunner) next(t *testing.T) turnCall {
	t.Helper()
	select {
	case c := <-r.turns:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no turn was started")
	}
	return turnCall{}
}

// begin takes the next turn and marks its entries started, as a turn does
// before it runs the agent.
func (r *recRunner) begin(t *testing.T) turnCall {
	t.Helper()
	c := r.next(t)
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// run takes the next turn, marks it started and ends it with st.
func (r *recRunner) run(t *testing.T, st Status) *Batch {
	t.Helper()
	c := r.next(t)
	if st == Ran {
		if err := c.b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	c.done <- st
	return c.b
}

type recObserver struct {
	mu      sync.Mutex
	depth   int
	dropped int
}

func (o *recObserver) SetQueueDepth(n int) { o.mu.Lock(); o.depth = n; o.mu.Unlock() }
func (o *recObserver) Dropped(string, string) {
	o.mu.Lock()
	o.dropped++
	o.mu.Unlock()
}

// recNotifier records the queue's notices.
type recNotifier struct {
	mu    sync.Mutex
	texts []string
}

func (n *recNotifier) Notify(key sessionkey.Key, tgt message.Target, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.texts = append(n.texts, key.Chat+" "+tgt.Instance+"/"+tgt.ChatID+": "+text)
}

func (n *recNotifier) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.texts...)
}

type fixture struct {
	t     *testing.T
	db    *sqlite.DB
	q     *Queue
	run   *recRunner
	obs   *recObserver
	notes *recNotifier
	n     int
}

func newFixture(t *testing.T, pol Policy) *fixture {
	t.Helper()
	return newFixtureWith(t, pol, nil)
}

// newFixtureWith is newFixture with the queue's options changed by set.
func newFixtureWith(t *testing.T, pol Policy, set func(*Options)) *fixture {
	t.Helper()
	db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, run: newRecRunner(), obs: &recObserver{}, notes: &recNotifier{}}
	o := Options{Journal: db, Runner: f.run, Observer: f.obs, Notifier: f.notes, Policy: pol, Backoff: time.Millisecond}
	if set != nil {
		set(&o)
	}
	f.q = New(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.q.Close(ctx)
		_ = db.Close()
	})
	return f
}

// item accepts a message into the journal and returns it as a queue item.
func (f *fixture) item(body string) Item {
	f.t.Helper()
	return f.itemIn("tg", "1", body)
}

// itemIn is item in another chat.
func (f *fixture) itemIn(instance, chat, body string) Item {
	f.t.Helper()
	f.n++
	m := message.Message{Instance: instance, ChatID: chat, MessageID: fmt.Sprint(f.n), Body: body, Sender: channel.Sender{ID: "7", Name: "Ann"}}
	res, err := f.db.Accept(context.Background(), store.Inbound{Instance: instance, ChatID: chat, MessageID: m.MessageID, Message: message.Encode(&m)})
	if err != nil {
		f.t.Fatal(err)
	}
	return Item{ID: res.ID, Message: m}
}

func bodies(t *testing.T, b *Batch) []string {
	t.Helper()
	var out []string
	for _, e := range b.Entries {
		m, err := message.Decode(e.Message)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Body)
	}
	return out
}

func (f *fixture) state(id int64) store.State {
	f.t.Helper()
	return f.entry(id).State
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// runEach runs the next turns to the end, one per body, and checks each
// carries that one message, in this order.
func (f *fixture) runEach(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{w}) {
			t.Fatalf("got %v, want %s", got, w)
		}
	}
}

func TestFollowupOneTurnPerMessageInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	f.q.Enqueue(sk("k"), []Item{f.item("a")})
	c := f.run.begin(t) // "a" is running
	f.q.Enqueue(sk("k"), []Item{f.item("b")})
	f.q.Enqueue(sk("k"), []Item{f.item("c")})
	if got := bodies(t, c.b); !equal(got, []string{"a"}) {
		t.Fatalf("first turn %v", got)
	}
	if !f.q.Running(sk("k")) || f.q.Depth() != 2 {
		t.Fatalf("running %v depth %d", f.q.Running(sk("k")), f.q.Depth())
	}
	c.done <- Ran
	f.runEach(t, "b", "c")
	if f.q.Depth() != 0 {
		t.Errorf("depth %d after every turn", f.q.Depth())
	}
}

func TestDebounceBatchIsOneTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	a, b := f.item("a"), f.item("b")
	f.q.Enqueue(sk("k"), []Item{a, b})
	got := f.run.run(t, Ran)
	if !equal(bodies(t, got), []string{"a", "b"}) || got.Collected {
		t.Fatalf("batch %v collected %v", bodies(t, got), got.Collected)
	}
	if cov := got.Covers(); len(cov) != 1 || cov[0] != b.ID {
		t.Errorf("covers %v, want [%d]", cov, b.ID)
	}
}

func TestCollectTakesEverythingWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{Mode: Collect})
	wantCollected(t, f)
}

// wantCollected: with "a" running, "b" and "c" arriving meanwhile are
// one collected turn after it.
func wantCollected(t *testing.T, f *fixture) {
	t.Helper()
	f.q.Enqueue(sk("k"), []Item{f.item("a")})
	c := f.run.begin(t)
	f.q.Enqueue(sk("k"), []Item{f.item("b")})
	f.q.Enqueue(sk("k"), []Item{f.item("c")})
	c.done <- Ran
	got := f.run.run(t, Ran)
	if !equal(bodies(t, got), []string{"b", "c"}) || !got.Collected {
		t.Fatalf("batch %v collected %v", bodies(t, got), got.Collected)
	}
}

// A session's own mode (/queue) wins over the policy: collect for "k",
// while the policy says followup.
func TestSessionModeOverridesThePolicy(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, Policy{Mode: Followup}, func(o *Options) {
		o.SessionMode = func(key sessionkey.Key) (Mode, bool) {
			if key == sk("k") {
				return Collect, true
			}
			return "", true
		}
	})
	wantCollected(t, f)
}

// In collect mode a session shared by two chats (dm_scope "main") takes
// each chat's messages in its own turn, so each is answered where it came
// from.
func TestCollectKeepsChatsApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{Mode: Collect})
	f.q.Enqueue(sk("k"), []Item{f.item("busy")})
	c := f.run.begin(t)
	f.q.Enqueue(sk("k"), []Item{f.item("tg one")})
	f.q.Enqueue(sk("k"), []Item{f.itemIn("dc", "9", "dc one")})
	f.q.Enqueue(sk("k"), []Item{f.item("tg two")})
	c.done <- Ran
	if got := f.run.run(t, Ran); !equal(bodies(t, got), []string{"tg one", "tg two"}) {
		t.Fatalf("first batch %v", bodies(t, got))
	}
	if got := f.run.run(t, Ran); !equal(bodies(t, got), []string{"dc one"}) {
		t.Fatalf("second batch %v", bodies(t, got))
	}
}

func TestInterruptAbortsTheRunningTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{Mode: Followup, ByInstance: map[string]Mode{"tg": Interrupt}})
	f.q.Enqueue(sk("k"), []Item{f.item("slow")})
	c := f.run.begin(t)
	f.q.Enqueue(sk("k"), []Item{f.item("newer")})
	if c.b.AbortReason() != "interrupted by a new message" || len(f.run.aborts) != 1 {
		t.Fatalf("reason %q aborts %v", c.b.AbortReason(), f.run.aborts)
	}
	c.done <- Ran
	if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{"newer"}) {
		t.Fatalf("next turn %v", got)
	}
}

func TestSteerJoinsTheRunningTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{Mode: Steer})
	f.run.steer = true
	f.q.Enqueue(sk("k"), []Item{f.item("first")})
	c := f.run.begin(t)
	s := f.item("more")
	f.q.Enqueue(sk("k"), []Item{s})
	if cov := c.b.Covers(); len(cov) != 1 || cov[0] != s.ID {
		t.Fatalf("covers %v, want the steered %d", cov, s.ID)
	}
	if f.state(s.ID) != store.StateProcessing || f.q.Depth() != 0 {
		t.Errorf("steered entry %s, depth %d", f.state(s.ID), f.q.Depth())
	}
	c.done <- Ran
	f.run.steer = false
	f.q.Enqueue(sk("k"), []Item{f.item("after")})
	if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{"after"}) {
		t.Fatalf("steered message run again: %v", got)
	}
}

// The cap counts turns, not messages: a burst a debounce window merged
// into one batch is one, so with a cap of 1 nothing of it is dropped.
func TestCapCountsADebouncedBurstOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{Cap: 1, Drop: DropOld})
	f.q.Enqueue(sk("k"), []Item{f.item("busy")})
	c := f.run.begin(t)
	f.q.Enqueue(sk("k"), []Item{f.item("part one"), f.item("part two"), f.item("part three")})
	c.done <- Ran
	got := f.run.run(t, Ran)
	if !equal(bodies(t, got), []string{"part one", "part two", "part three"}) || f.obs.dropped != 0 {
		t.Fatalf("next %v, %d dropped", bodies(t, got), f.obs.dropped)
	}
}

func TestCapPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		drop      Drop
		next      []string
		summaries int
		notice    string // "" for none
	}{
		{DropOld, []string{"m3"}, 0, "the oldest were skipped"},
		{DropNew, []string{"m1"}, 0, "the newest were skipped"},
		{DropSummarize, []string{"m3"}, 1, ""},
	} {
		t.Run(string(tc.drop), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Policy{Cap: 1, Drop: tc.drop})
			f.q.Enqueue(sk("k"), []Item{f.item("busy")})
			c := f.run.begin(t)
			var items []Item
			for _, w := range []string{"m1", "m2", "m3"} {
				it := f.item(w)
				items = append(items, it)
				f.q.Enqueue(sk("k"), []Item{it})
			}
			c.done <- Ran
			got := f.run.run(t, Ran)
			if !equal(bodies(t, got), tc.next) || len(got.Summaries) != tc.summaries {
				t.Fatalf("next %v summaries %q", bodies(t, got), got.Summaries)
			}
			// Summaries are capped like the queue: the latest drop is kept.
			if tc.summaries > 0 && got.Summaries[0] != "- Ann: m2" {
				t.Errorf("summary %q", got.Summaries[0])
			}
			if f.obs.dropped != 2 {
				t.Errorf("dropped %d, want 2", f.obs.dropped)
			}
			// The chat is told once for both drops of this turn (not with
			// summarize: the agent gets the messages).
			notes := f.notes.all()
			if tc.notice == "" && len(notes) != 0 || tc.notice != "" && (len(notes) != 1 || !strings.HasPrefix(notes[0], "k tg/1: ") || !strings.Contains(notes[0], tc.notice)) {
				t.Fatalf("notices %q, want one saying %q", notes, tc.notice)
			}
			if tc.notice == "" {
				return
			}
			// A drop after the next turn started is told again.
			f.q.Enqueue(sk("k"), []Item{f.item("busy again")})
			c = f.run.begin(t)
			for _, w := range []string{"m4", "m5"} {
				f.q.Enqueue(sk("k"), []Item{f.item(w)})
			}
			if n := len(f.notes.all()); n != 2 {
				t.Errorf("%d notices after a drop during the next turn, want 2", n)
			}
			c.done <- Ran
		})
	}
}

func TestRetryAndHalt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	it := f.item("a")
	f.q.Enqueue(sk("k"), []Item{it})
	f.run.run(t, Retry) // a store failure: the same entry again
	if got := bodies(t, f.run.run(t, Halt)); !equal(got, []string{"a"}) {
		t.Fatalf("retried %v", got)
	}
	if f.state(it.ID) != store.StateQueued {
		t.Fatalf("halted entry is %s, want queued", f.state(it.ID))
	}
	f.q.Kick(sk("k")) // e.g. the instance is back after a restart
	if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{"a"}) {
		t.Fatalf("after kick %v", got)
	}
}

func TestClearDropsWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	f.q.Enqueue(sk("k"), []Item{f.item("a")})
	c := f.run.begin(t)
	b := f.item("b")
	f.q.Enqueue(sk("k"), []Item{b})
	if n := f.q.Clear(sk("k"), "cleared by /stop"); n != 1 || f.state(b.ID) != store.StateDropped || f.q.Depth() != 0 {
		t.Fatalf("cleared %d, state %s, depth %d", n, f.state(b.ID), f.q.Depth())
	}
	c.done <- Ran
}

func TestParse(t *testing.T) {
	t.Parallel()
	if m, err := ParseMode(" Collect "); err != nil || m != Collect {
		t.Errorf("ParseMode: %v %v", m, err)
	}
	if m, _ := ParseMode(""); m != Followup {
		t.Errorf("default mode %v", m)
	}
	if _, err := ParseMode("sideways"); err == nil {
		t.Error("unknown mode accepted")
	}
	if m, err := ParseMode("queue"); err != nil || m != Steer { // OpenClaw's legacy name
		t.Errorf("ParseMode(queue): %v %v", m, err)
	}
	if d, _ := ParseDrop(""); d != DropSummarize {
		t.Errorf("default drop %v", d)
	}
	if _, err := ParseDrop("x"); err == nil {
		t.Error("unknown drop accepted")
	}
}

func TestOrderedRunsInOrderPerKey(t *testing.T) {
	t.Parallel()
	o := NewOrdered()
	var mu sync.Mutex
	got := map[string][]int{}
	for i := range 100 {
		for _, k := range []string{"a", "b"} {
			o.Do(sk(k), func() { mu.Lock(); got[k] = append(got[k], i); mu.Unlock() })
		}
	}
	o.Wait()
	for _, k := range []string{"a", "b"} {
		for i, v := range got[k] {
			if v != i {
				t.Fatalf("%s out of order: %v", k, got[k])
			}
		}
	}
}

// startingJournal starts the oldest pending entry right after the cap
// listed the queue, as a lane's drain does when it races the cap.
type startingJournal struct {
	store.Journal
	once sync.Once
}

func (j *startingJournal) ListPending(ctx context.Context, key string, limit int) ([]store.Entry, error) {
	es, err := j.Journal.ListPending(ctx, key, limit)
	if len(es) > 1 {
		j.once.Do(func() { _ = j.Journal.Start(ctx, es[0].ID) })
	}
	return es, err
}

// TestCapNeverDropsTheEntryBeingStarted: the cap drops only what still
// waits; an entry the lane started between the cap's read and its drop
// keeps running (its reply is not refused and thrown away).
func TestCapNeverDropsTheEntryBeingStarted(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t, t.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	obs := &recObserver{}
	q := New(Options{Journal: &startingJournal{Journal: db}, Runner: newRecRunner(), Observer: obs, Policy: Policy{Cap: 1, Drop: DropOld}})
	f := &fixture{t: t, db: db}
	a, b := f.item("a"), f.item("b")
	for _, it := range []Item{a, b} {
		if err := db.Enqueue(context.Background(), it.ID, sk("k").String()); err != nil {
			t.Fatal(err)
		}
	}
	// Queued behind the queue's back (as found at a restart): the lane
	// knows to read them from the journal.
	q.mu.Lock()
	q.lane(sk("k")).forget()
	q.mu.Unlock()
	q.applyCap(Policy{Cap: 1, Drop: DropOld}, sk("k"), "tg")
	if st := f.state(a.ID); st != store.StateProcessing {
		t.Fatalf("the started entry is %s, want processing (never dropped under its turn)", st)
	}
	if st := f.state(b.ID); st != store.StateQueued {
		t.Errorf("the waiting entry is %s", st)
	}
	if obs.dropped != 0 {
		t.Errorf("%d drops counted, want 0", obs.dropped)
	}
}

// direct is item with the journal's bytes at hand, as the gateway enqueues
// a message it just accepted: the fast path of startNow applies.
func (f *fixture) direct(body string) Item {
	f.t.Helper()
	it := f.item(body)
	it.Raw = message.Encode(&it.Message)
	return it
}

func (f *fixture) entry(id int64) store.Entry {
	f.t.Helper()
	return sqlitetest.Entry(f.t, f.db, id)
}

// TestStartNowSkipsTheQueue: a message to an idle session with nothing
// waiting starts its turn from the item in hand; it is never queued in the
// journal, and Start routes and starts it in one write.
func TestStartNowSkipsTheQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	it := f.direct("a")
	f.q.Enqueue(sk("k"), []Item{it})
	c := f.run.next(t)
	if got := bodies(t, c.b); !equal(got, []string{"a"}) {
		t.Fatalf("turn %v", got)
	}
	if e := f.entry(it.ID); e.State != store.StateAccepted || e.SessionKey != "" {
		t.Fatalf("before Start: %s in %q, want accepted, not routed", e.State, e.SessionKey)
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e := f.entry(it.ID); e.State != store.StateProcessing || e.SessionKey != sk("k").String() || e.Attempts != 1 {
		t.Fatalf("after Start: %s in %q, attempts %d", e.State, e.SessionKey, e.Attempts)
	}
	if !f.q.Running(sk("k")) || f.q.Depth() != 0 {
		t.Fatalf("running %v depth %d", f.q.Running(sk("k")), f.q.Depth())
	}
	c.done <- Ran
	// The next message while nothing runs takes the fast path again.
	f.q.Enqueue(sk("k"), []Item{f.direct("b")})
	if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{"b"}) {
		t.Fatalf("second turn %v", got)
	}
}

// TestStartNowKeepsTheOrder: a session with entries waiting (a halted lane,
// entries recovered at start) runs them before a new message.
func TestStartNowKeepsTheOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	f.q.Enqueue(sk("k"), []Item{f.item("old")})
	f.run.run(t, Halt) // stays queued; the lane stops
	f.q.Enqueue(sk("k"), []Item{f.direct("new")})
	f.runEach(t, "old", "new")
}

// TestStartNowRetry: when the turn cannot start (a store failure), the
// entry joins the session's queue and runs from there, once.
func TestStartNowRetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	it := f.direct("a")
	f.q.Enqueue(sk("k"), []Item{it})
	f.run.run(t, Retry)
	c := f.run.next(t)
	if got := bodies(t, c.b); !equal(got, []string{"a"}) {
		t.Fatalf("retried %v", got)
	}
	if e := f.entry(it.ID); e.State != store.StateQueued || e.SessionKey != sk("k").String() {
		t.Fatalf("after the retry: %s in %q, want queued in k", e.State, e.SessionKey)
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.done <- Ran
	if f.q.Depth() != 0 {
		t.Errorf("depth %d", f.q.Depth())
	}
}

// countingJournal counts the reads of session queues and can hold the
// next ListPending (CountPending, Enqueue) until the test lets it return.
type countingJournal struct {
	store.Journal
	mu        sync.Mutex
	reads     int
	hold      chan chan struct{} // when set, ListPending sends a release channel and waits on it
	holdCount chan chan struct{} // likewise for CountPending
	holdQueue chan chan struct{} // and for Enqueue, once the entry is queued
}

func (j *countingJournal) Enqueue(ctx context.Context, id int64, key string) error {
	j.mu.Lock()
	hold := j.holdQueue
	j.holdQueue = nil
	j.mu.Unlock()
	err := j.Journal.Enqueue(ctx, id, key)
	if hold != nil {
		release := make(chan struct{})
		hold <- release
		<-release
	}
	return err
}

func (j *countingJournal) ListPending(ctx context.Context, key string, limit int) ([]store.Entry, error) {
	j.mu.Lock()
	j.reads++
	hold := j.hold
	j.hold = nil
	j.mu.Unlock()
	es, err := j.Journal.ListPending(ctx, key, limit)
	if hold != nil {
		release := make(chan struct{})
		hold <- release
		<-release
	}
	return es, err
}

func (j *countingJournal) CountPending(ctx context.Context, key string) (int, error) {
	j.mu.Lock()
	j.reads++
	hold := j.holdCount
	j.holdCount = nil
	j.mu.Unlock()
	n, err := j.Journal.CountPending(ctx, key)
	if hold != nil {
		release := make(chan struct{})
		hold <- release
		<-release
	}
	return n, err
}

func (j *countingJournal) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.reads
}

// TestBusyLaneReadsNoJournal: messages queued behind a running turn wait
// in the lane's mirror of the session queue, so running them in order
// reads no session queue from the journal (the cap and the fast path
// included); the journal still holds them as queued.
func TestBusyLaneReadsNoJournal(t *testing.T) {
	t.Parallel()
	var j *countingJournal
	f := newFixtureWith(t, Policy{Cap: 20}, func(o *Options) { j = &countingJournal{Journal: o.Journal}; o.Journal = j })
	f.q.Enqueue(sk("k"), []Item{f.direct("a")})
	c := f.run.begin(t)
	var want []string
	for i := range 5 {
		it := f.direct(fmt.Sprint("m", i))
		f.q.Enqueue(sk("k"), []Item{it})
		if st := f.state(it.ID); st != store.StateQueued {
			t.Fatalf("waiting entry is %s in the journal", st)
		}
		want = append(want, fmt.Sprint("m", i))
	}
	c.done <- Ran
	f.runEach(t, want...)
	if n := j.count(); n != 0 {
		t.Errorf("%d reads of the session queue, want 0", n)
	}
	// Entries queued behind the queue's back arrive with a Kick: the lane
	// reads the journal for them.
	it := f.item("recovered")
	if err := f.db.Enqueue(context.Background(), it.ID, sk("k").String()); err != nil {
		t.Fatal(err)
	}
	f.q.Recovered(1)
	f.q.Kick(sk("k"))
	if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{"recovered"}) {
		t.Fatalf("after the kick %v", got)
	}
	if j.count() == 0 {
		t.Error("the kicked lane did not read the journal")
	}
}

// TestReadRacingEnqueueIsNotKept: a journal read of the session queue that
// an Enqueue overtakes is used once but not kept as the mirror (it may
// lack the new entry): the next look reads again and runs the new entry.
func TestReadRacingEnqueueIsNotKept(t *testing.T) {
	t.Parallel()
	var j *countingJournal
	f := newFixtureWith(t, Policy{}, func(o *Options) { j = &countingJournal{Journal: o.Journal}; o.Journal = j })
	old := f.item("old")
	if err := f.db.Enqueue(context.Background(), old.ID, sk("k").String()); err != nil {
		t.Fatal(err)
	}
	hold := make(chan chan struct{})
	j.mu.Lock()
	j.hold = hold
	j.mu.Unlock()
	f.q.Recovered(1)
	f.q.Kick(sk("k"))
	release := <-hold // the lane has read [old] and waits
	f.q.Enqueue(sk("k"), []Item{f.direct("new")})
	close(release)
	f.runEach(t, "old", "new")
	if f.q.Depth() != 0 {
		t.Errorf("depth %d", f.q.Depth())
	}
}

// TestIdleKeepsALaneWithWaitingEntries: entries an Enqueue added to the
// mirror after the drain's last look, before its kick marked the lane
// dirty, keep the lane draining; it is not removed with them.
func TestIdleKeepsALaneWithWaitingEntries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	f.q.mu.Lock()
	l := f.q.lane(sk("k"))
	l.running = true
	l.wait(sk("k"), []Item{f.direct("late")}) // Enqueue's add, its kick not yet run
	f.q.mu.Unlock()
	if f.q.idle(l, nil) {
		t.Fatal("the lane went idle with an entry waiting in its mirror")
	}
	f.q.mu.Lock()
	defer f.q.mu.Unlock()
	if f.q.lanes[sk("k")] != l || !l.running {
		t.Fatal("the lane was removed or stopped")
	}
}

// drained is closed once the queue's lanes have all stopped draining. No
// lane may start (Add) before the call.
func drained(q *Queue) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(c)
	}()
	return c
}

// TestIdleKeepsALaneARacingEnqueueQueuedInto: the drain found the session
// queue empty with a journal read that an Enqueue overtook (the entry is
// queued in the journal, the mirror not known, the Enqueue's kick not yet
// run: the cap is counting). The lane was removed on that read: the kick
// then made a new lane, known and empty, which ended at once, and the
// entry stayed queued with no lane to run it until a restart (the
// gateway's TestOlderMessageTakenWhileANewerOneWaits lost "six" so).
func TestIdleKeepsALaneARacingEnqueueQueuedInto(t *testing.T) {
	t.Parallel()
	var j *countingJournal
	f := newFixtureWith(t, Policy{}, func(o *Options) { j = &countingJournal{Journal: o.Journal}; o.Journal = j })
	hold, holdCount := make(chan chan struct{}), make(chan chan struct{})
	j.mu.Lock()
	j.hold, j.holdCount = hold, holdCount
	j.mu.Unlock()
	// The session's queue changed behind the mirror (entries handed over,
	// none left by now): the lane reads the journal, finds nothing, and is
	// held before it looks at what it read.
	f.q.Kick(sk("k"))
	readEmpty := <-hold
	six := f.direct("six")
	enqueued := make(chan struct{})
	go func() {
		defer close(enqueued)
		f.q.Enqueue(sk("k"), []Item{six})
	}()
	counting := <-holdCount // six is queued; the cap counts, the kick is to come
	first := drained(f.q)
	close(readEmpty)
	var c turnCall
	select {
	case c = <-f.run.turns: // the lane looked again
	case <-first: // the lane stopped: the kick must find it
		close(counting)
		<-enqueued
		second := drained(f.q)
		select {
		case c = <-f.run.turns:
		case <-second:
			t.Fatalf("six is %s in the journal and no lane runs it", f.state(six.ID))
		}
	case <-time.After(10 * time.Second): // a bound on a failing test
		t.Fatal("the lane neither ran six nor stopped")
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := bodies(t, c.b); !equal(got, []string{"six"}) {
		t.Fatalf("turn %v, want six", got)
	}
	c.done <- Ran
}

// TestEnqueueUnderWayIsNotReadIntoTheMirror: a journal read of the
// session queue that lists an entry whose Enqueue has not yet added it to
// the mirror is used once, not kept. It was kept: a turn took the entry
// from it, the Enqueue then added it to the mirror again, and the lane
// handed it out a second time (in the gateway the lane stuck on it, its
// entry no longer queued, and the messages behind it never ran: "six"
// after "five").
func TestEnqueueUnderWayIsNotReadIntoTheMirror(t *testing.T) {
	t.Parallel()
	var j *countingJournal
	f := newFixtureWith(t, Policy{}, func(o *Options) { j = &countingJournal{Journal: o.Journal}; o.Journal = j })
	four := f.item("four")
	if err := f.db.Enqueue(context.Background(), four.ID, sk("k").String()); err != nil {
		t.Fatal(err)
	}
	f.q.Recovered(1)
	f.q.Kick(sk("k"))
	c4 := f.run.begin(t)
	f.q.Kick(sk("k")) // more handed over meanwhile (none by the time it looks)
	holdQueue := make(chan chan struct{})
	j.mu.Lock()
	j.holdQueue = holdQueue
	j.mu.Unlock()
	enqueued := make(chan struct{})
	go func() {
		defer close(enqueued)
		f.q.Enqueue(sk("k"), []Item{f.direct("five")})
	}()
	queued := <-holdQueue // five is queued in the journal, not in the mirror
	c4.done <- Ran
	// The lane reads the journal (four's turn ran; it was kicked): five.
	if got := bodies(t, f.run.run(t, Ran)); !equal(got, []string{"five"}) {
		t.Fatalf("turn %v, want five", got)
	}
	<-drained(f.q) // the lane found nothing more
	close(queued)
	<-enqueued
	select {
	case c := <-f.run.turns:
		c.done <- Halt
		t.Fatalf("a turn of %v after five ran: five was handed out again", bodies(t, c.b))
	case <-drained(f.q):
	}
}

// TestKickDuringAReadIsNotLost: entries queued behind the lane's back
// (handed over) come with a Kick; a journal read under way when it comes
// may lack them and is not kept as the mirror (it was: the lane then
// found its mirror empty and stopped, the entries left queued).
func TestKickDuringAReadIsNotLost(t *testing.T) {
	t.Parallel()
	var j *countingJournal
	f := newFixtureWith(t, Policy{}, func(o *Options) { j = &countingJournal{Journal: o.Journal}; o.Journal = j })
	hold := make(chan chan struct{})
	j.mu.Lock()
	j.hold = hold
	j.mu.Unlock()
	f.q.Kick(sk("k"))
	read := <-hold // the lane read an empty queue
	handed := f.item("handed")
	if err := f.db.Enqueue(context.Background(), handed.ID, sk("k").String()); err != nil {
		t.Fatal(err)
	}
	f.q.Recovered(1)
	f.q.Kick(sk("k"))
	first := drained(f.q)
	close(read)
	select {
	case c := <-f.run.turns:
		if err := c.b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := bodies(t, c.b); !equal(got, []string{"handed"}) {
			t.Fatalf("turn %v, want handed", got)
		}
		c.done <- Ran
	case <-first:
		t.Fatalf("the lane stopped; the handed entry is %s in the journal", f.state(handed.ID))
	}
}

// TestRetryReadsTheJournalAgain: a turn that could not start (Retry) is
// looked for again in the journal, not in the lane's mirror: an entry
// the mirror holds by mistake (the journal refuses its start: it is no
// longer queued) is not retried for ever ahead of the entries behind it.
func TestRetryReadsTheJournalAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{})
	ghost := f.direct("ghost")
	if err := f.db.Enqueue(context.Background(), ghost.ID, sk("k").String()); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Start(context.Background(), ghost.ID); err != nil {
		t.Fatal(err)
	}
	f.q.mu.Lock()
	f.q.lane(sk("k")).wait(sk("k"), []Item{ghost}) // in the mirror, started in the journal
	f.q.mu.Unlock()
	f.q.Recovered(1) // counted, as its Enqueue did
	f.q.Enqueue(sk("k"), []Item{f.direct("next")})
	c := f.run.next(t)
	if err := c.b.Start(context.Background()); err == nil {
		t.Fatalf("the journal started %v again", bodies(t, c.b))
	}
	c.done <- Retry
	c = f.run.next(t)
	if got := bodies(t, c.b); !equal(got, []string{"next"}) {
		c.done <- Halt
		t.Fatalf("after the retry %v, want next", got)
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.done <- Ran
}

// errDiskFull is the store failure failJournal answers with.
var errDiskFull = errors.New("database or disk is full")

// failJournal fails the writes and reads a test names until the test lets
// them through: Enqueue (Start) of the ids in failing (starting), until
// that id's gate is closed, and the next listFails reads of a session
// queue.
type failJournal struct {
	store.Journal
	mu        sync.Mutex
	failing   map[int64]chan struct{}
	starting  map[int64]chan struct{}
	listFails int
}

// fail makes Enqueue of id fail until the returned func is called.
func (j *failJournal) fail(id int64) (heal func()) { return j.gate(&j.failing, id) }

// failStart makes Start of id fail until the returned func is called.
func (j *failJournal) failStart(id int64) (heal func()) { return j.gate(&j.starting, id) }

func (j *failJournal) gate(m *map[int64]chan struct{}, id int64) func() {
	gate := make(chan struct{})
	j.mu.Lock()
	if *m == nil {
		*m = map[int64]chan struct{}{}
	}
	(*m)[id] = gate
	j.mu.Unlock()
	return func() { close(gate) }
}

func (j *failJournal) Enqueue(ctx context.Context, id int64, key string) error {
	j.mu.Lock()
	gate := j.failing[id]
	j.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		default:
			return errDiskFull
		}
	}
	return j.Journal.Enqueue(ctx, id, key)
}

func (j *failJournal) Start(ctx context.Context, ids ...int64) error {
	j.mu.Lock()
	var gates []chan struct{}
	for _, id := range ids {
		if g := j.starting[id]; g != nil {
			gates = append(gates, g)
		}
	}
	j.mu.Unlock()
	for _, g := range gates {
		select {
		case <-g:
		default:
			return errDiskFull
		}
	}
	return j.Journal.Start(ctx, ids...)
}

func (j *failJournal) ListPending(ctx context.Context, key string, limit int) ([]store.Entry, error) {
	j.mu.Lock()
	fail := j.listFails > 0
	if fail {
		j.listFails--
	}
	j.mu.Unlock()
	if fail {
		return nil, errDiskFull
	}
	return j.Journal.ListPending(ctx, key, limit)
}

func newFailFixture(t *testing.T, pol Policy) (*fixture, *failJournal) {
	t.Helper()
	var j *failJournal
	f := newFixtureWith(t, pol, func(o *Options) { j = &failJournal{Journal: o.Journal}; o.Journal = j })
	return f, j
}

// turnOrStop waits for the next turn, or fails the test when every lane
// stopped first (what was queued then waits for a restart). No lane may
// start before the call (see drained).
func (f *fixture) turnOrStop(t *testing.T, what string) turnCall {
	t.Helper()
	stopped := drained(f.q)
	select {
	case c := <-f.run.turns:
		return c
	case <-stopped:
		t.Fatalf("no lane runs %s", what)
	case <-time.After(10 * time.Second): // a bound on a failing test
		t.Fatalf("no turn for %s", what)
	}
	return turnCall{}
}

// TestEnqueueFailingPartWayLosesNothing: a debounced burst whose Enqueue
// fails on its second entry (the first queued in the journal, the rest
// still accepted) runs, whole and once, when the store works again; it
// does not wait in the journal for a restart with no lane to run it.
func TestEnqueueFailingPartWayLosesNothing(t *testing.T) {
	t.Parallel()
	f, j := newFailFixture(t, Policy{})
	f.q.Enqueue(sk("k"), []Item{f.direct("busy")})
	c := f.run.begin(t)
	one, two, three := f.item("one"), f.item("two"), f.item("three")
	heal := j.fail(two.ID)
	f.q.Enqueue(sk("k"), []Item{one, two, three})
	heal()
	c.done <- Ran
	c = f.turnOrStop(t, "one, two, three")
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := bodies(t, c.b); !equal(got, []string{"one", "two", "three"}) {
		t.Fatalf("turn %v, want the burst", got)
	}
	c.done <- Ran
	if f.q.Depth() != 0 {
		t.Errorf("depth %d after the burst ran", f.q.Depth())
	}
}

// TestEnqueueFailureKeepsTheOrder: while the store refuses an entry of a
// burst, a newer message of the session neither overtakes it (it started
// at once: the queue counted nothing waiting) nor is lost; the lane runs
// them in order once the store works.
func TestEnqueueFailureKeepsTheOrder(t *testing.T) {
	t.Parallel()
	f, j := newFailFixture(t, Policy{})
	a, b := f.item("a"), f.item("b")
	heal := j.fail(b.ID)
	f.q.Enqueue(sk("k"), []Item{a, b})
	f.q.Enqueue(sk("k"), []Item{f.direct("c")})
	heal()
	c := f.turnOrStop(t, "a, b")
	if got := bodies(t, c.b); !equal(got, []string{"a", "b"}) {
		c.done <- Halt
		t.Fatalf("first turn %v, want a b", got)
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.done <- Ran
	f.runEach(t, "c")
	if e := f.entry(b.ID); e.State != store.StateDone && e.State != store.StateProcessing {
		t.Errorf("b is %s", e.State)
	}
}

// TestEnqueueOfOneFailing: a single message that cannot take the fast
// path (its session busy) and whose Enqueue fails runs once the store
// works, after the running turn.
func TestEnqueueOfOneFailing(t *testing.T) {
	t.Parallel()
	f, j := newFailFixture(t, Policy{})
	f.q.Enqueue(sk("k"), []Item{f.direct("busy")})
	c := f.run.begin(t)
	late := f.direct("late")
	heal := j.fail(late.ID)
	f.q.Enqueue(sk("k"), []Item{late})
	heal()
	c.done <- Ran
	c = f.turnOrStop(t, "late")
	if got := bodies(t, c.b); !equal(got, []string{"late"}) {
		t.Fatalf("turn %v, want late", got)
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.done <- Ran
}

// TestKickedLaneRetriesAFailedRead: a lane kicked for entries queued
// behind its back (recovered, handed over) whose read of the journal
// fails reads again after the backoff; it does not stop and leave them
// queued until the session's next message or a restart.
func TestKickedLaneRetriesAFailedRead(t *testing.T) {
	t.Parallel()
	f, j := newFailFixture(t, Policy{})
	it := f.item("recovered")
	if err := f.db.Enqueue(context.Background(), it.ID, sk("k").String()); err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	j.listFails = 2
	j.mu.Unlock()
	f.q.Recovered(1)
	f.q.Kick(sk("k"))
	c := f.turnOrStop(t, "recovered")
	if got := bodies(t, c.b); !equal(got, []string{"recovered"}) {
		t.Fatalf("turn %v", got)
	}
	if err := c.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.done <- Ran
}

// TestSteeredStartRetried: a message steered into the running turn whose
// journal start fails is started once the store works: it neither waits
// queued in the journal, out of the lane's sight, for a restart that
// would run it again, nor runs twice now.
func TestSteeredStartRetried(t *testing.T) {
	t.Parallel()
	f, j := newFailFixture(t, Policy{Mode: Steer})
	f.run.steer = true
	f.q.Enqueue(sk("k"), []Item{f.direct("first")})
	c := f.run.begin(t)
	s := f.direct("more")
	heal := j.failStart(s.ID)
	f.q.Enqueue(sk("k"), []Item{s})
	if cov := c.b.Covers(); len(cov) != 1 || cov[0] != s.ID {
		t.Fatalf("covers %v, want the steered %d", cov, s.ID)
	}
	heal()
	c.done <- Ran
	select {
	case c := <-f.run.turns:
		c.done <- Halt
		t.Fatalf("the steered message ran again: %v", bodies(t, c.b))
	case <-drained(f.q):
	}
	if st := f.state(s.ID); st != store.StateProcessing {
		t.Fatalf("the steered entry is %s, want processing", st)
	}
	if f.q.Depth() != 0 {
		t.Errorf("depth %d", f.q.Depth())
	}
}

// TestRunningEntryIsNotCountedWaiting: the entry a turn runs is no longer
// in the lane's mirror of what waits, so the cap does not count it: with
// a cap of 1 and drop "new", one message queued behind the running turn
// is kept (it was dropped: the mirror still held the running entry, the
// gateway's TestQueueDropNew lost "after the drop" so under load).
func TestRunningEntryIsNotCountedWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Policy{Cap: 1, Drop: DropNew})
	f.q.Enqueue(sk("k"), []Item{f.direct("a")})
	c := f.run.begin(t)
	f.q.Enqueue(sk("k"), []Item{f.direct("b")})
	c.done <- Ran
	c = f.run.begin(t) // b runs, read from the mirror
	if got := bodies(t, c.b); !equal(got, []string{"b"}) {
		t.Fatalf("turn %v, want b", got)
	}
	it := f.direct("c")
	f.q.Enqueue(sk("k"), []Item{it})
	if st := f.state(it.ID); st != store.StateQueued || f.obs.dropped != 0 {
		t.Fatalf("c is %s, %d dropped: the running b was counted as waiting", st, f.obs.dropped)
	}
	if n := f.q.Waiting(sk("k")); n != 1 {
		t.Errorf("%d waiting, want 1", n)
	}
	c.done <- Ran
	f.runEach(t, "c")
}

// sk is the key of a test session named chat.
func sk(chat string) sessionkey.Key {
	return sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: chat}
}

// A session's own mode is read once and kept; a read that failed is asked
// again; SetSessionMode (/queue) replaces what was kept.
func TestSessionModeIsKept(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reads, fail := 0, true
	f := newFixtureWith(t, Policy{Mode: Followup}, func(o *Options) {
		o.SessionMode = func(sessionkey.Key) (Mode, bool) {
			mu.Lock()
			defer mu.Unlock()
			reads++
			if fail {
				return "", false
			}
			return Collect, true
		}
	})
	k := sk("k")
	if m := f.q.sessionMode(k); m != "" {
		t.Fatalf("a failed read gave %q", m)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if m := f.q.sessionMode(k); m != Collect {
		t.Fatalf("mode %q after the store answered", m)
	}
	f.q.sessionMode(k)
	if reads != 2 {
		t.Errorf("%d reads, want 2 (the failed one asked again, the answer kept)", reads)
	}
	f.q.SetSessionMode(k, Interrupt)
	if m := f.q.sessionMode(k); m != Interrupt || reads != 2 {
		t.Errorf("mode %q after /queue (reads %d)", m, reads)
	}
}
