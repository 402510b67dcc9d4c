// Package storetest is the conformance suite of the store contract
// (core/store): every engine runs it from its own tests and must pass it
// unchanged. It checks, through the [store.Store] interface only, what the
// contract documents: the journal's state machine and recovery rules,
// dedupe with its TTL, the outbox, sessions, pairing and schedules, atomicity under
// concurrency, context handling and that state survives a restart.
//
// An engine's test looks like this:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Opener {
//			dir := t.TempDir() // fresh, empty storage for one subtest
//			return func(t *testing.T, now func() time.Time) store.Store {
//				s, err := engine.Open(context.Background(), dir, engine.Options{Now: now})
//				if err != nil {
//					t.Fatal(err)
//				}
//				return s
//			}
//		})
//	}
//
// Engine-specific behaviour (files, locks, schema versions, a dedupe cap,
// surviving kill -9) is tested by the engine itself.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Opener opens a store on one storage (a SQLite data directory, a
// PostgreSQL database, ...) with the given clock, which the store must use
// for every stamp and age check. The store must use the contract's
// defaults (store.DefaultDedupeTTL, store.DefaultMaxPendingPairings) and
// keep at least 1000 dedupe keys. The suite calls an Opener again after it
// closed the previous store: that is a restart, and the new store must see
// everything the old one committed. The suite closes every store it opens;
// an Opener reports a failure to open with t.Fatal.
type Opener func(t *testing.T, now func() time.Time) store.Store

// Run runs the suite as parallel subtests of t. newStorage is called once
// per subtest, with the subtest's t, and returns an Opener on new, empty
// storage (use t.TempDir and t.Cleanup for what it needs).
func Run(t *testing.T, newStorage func(t *testing.T) Opener) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, &env{t: t, clk: NewClock(), opener: newStorage(t)})
		})
	}
}

// cases are the suite's tests, one subtest each.
var cases = []struct {
	name string
	fn   func(*testing.T, *env)
}{
	{"AcceptAndEntry", testAcceptAndEntry},
	{"Dedupe", testDedupe},
	{"DedupeConcurrentSameKey", testDedupeConcurrentSameKey},
	{"StateMachine", testStateMachine},
	{"QueuePrimitives", testQueuePrimitives},
	{"Begin", testBegin},
	{"Amend", testAmend},
	{"CancelledContext", testCancelledContext},
	{"FailureIsolation", testFailureIsolation},
	{"Outbox", testOutbox},
	{"Parts", testParts},
	{"AttemptsAndLive", testAttemptsAndLive},
	{"AttemptFirst", testAttemptFirst},
	{"ReplySession", testReplySession},
	{"FinishFrom", testFinishFrom},
	{"Park", testPark},
	{"Ledger", testLedger},
	{"Audit", testAudit},
	{"History", testHistory},
	{"ToolResults", testToolResults},
	{"PairingGuesses", testPairingGuesses},
	{"Recover", testRecover},
	{"LaunchNotBegunIsFree", testLaunchNotBegunIsFree},
	{"MarkBegan", testMarkBegan},
	{"LaunchesAreBounded", testLaunchesAreBounded},
	{"Prune", testPrune},
	{"ReopenKeepsState", testReopenKeepsState},
	{"Sessions", testSessions},
	{"RecentSessionsAndPendingCounts", testRecentSessionsAndPendingCounts},
	{"Pairing", testPairing},
	{"ApprovedSenders", testApprovedSenders},
	{"Leases", testLeases},
	{"Schedules", testSchedules},
	{"SchedulesConcurrent", testSchedulesConcurrent},
}

// env is one subtest's storage and clock.
type env struct {
	t      *testing.T
	clk    *Clock
	opener Opener
}

// open opens a store on the subtest's storage and closes it when the
// subtest ends (Close is idempotent, so tests may close it earlier).
func (e *env) open() store.Store {
	e.t.Helper()
	s := e.opener(e.t, e.clk.Now)
	e.t.Cleanup(func() { s.Close() })
	return s
}

// Clock is an injected clock tests advance by hand. The zero value is not
// usable; create one with [NewClock].
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock standing at a fixed instant (a whole second).
func NewClock() *Clock { return &Clock{t: time.Unix(1_700_000_000, 0)} }

// Now returns the clock's time; pass it as a store's clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Msg is the i-th test message of chat 100 on instance tg.
func Msg(i int) store.Inbound {
	return store.Inbound{Instance: "tg", ChatID: "100", MessageID: fmt.Sprint(i), Message: []byte(fmt.Sprintf(`{"text":"m%d"}`, i))}
}

// MustAccept accepts in and fails the test unless it was stored as new.
func MustAccept(t testing.TB, d store.Store, in store.Inbound) int64 {
	t.Helper()
	r, err := d.Accept(context.Background(), in)
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if r.Duplicate {
		t.Fatalf("Accept %v: unexpected duplicate", in.MessageID)
	}
	return r.ID
}

// mustStart accepts in, queues it under key and starts it: a running
// turn's entry.
func mustStart(t testing.TB, d store.Store, in store.Inbound, key string) int64 {
	t.Helper()
	id := MustAccept(t, d, in)
	if err := d.Enqueue(context.Background(), id, key); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	return id
}

// PutSession stores s as it is (CreatedAt and UpdatedAt become now).
func PutSession(t testing.TB, d store.Store, s store.Session) {
	t.Helper()
	if _, err := d.UpdateSession(context.Background(), s.Key, func(x *store.Session, _ bool) error { *x = s; return nil }); err != nil {
		t.Fatalf("UpdateSession %s: %v", s.Key, err)
	}
}
