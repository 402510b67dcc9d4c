package usagelimit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
)

// resumes records the sessions each pause's end looked at.
type resumes struct {
	mu   sync.Mutex
	keys [][]string
	more chan struct{}
}

func (r *resumes) resume(keys []string) {
	r.mu.Lock()
	r.keys = append(r.keys, keys)
	r.mu.Unlock()
	r.more <- struct{}{}
}

func (r *resumes) wait(t *testing.T) []string {
	t.Helper()
	select {
	case <-r.more:
	case <-time.After(5 * time.Second): // a bound on a failing test
		t.Fatal("the pause did not end")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[len(r.keys)-1]
}

func open(t *testing.T, dir string, clk *tstimetest.Fake) store.Store {
	t.Helper()
	return sqlitetest.Open(t, dir, sqlite.Options{Synchronous: "NORMAL", Now: clk.Now})
}

// parkOne accepts a message of session key, starts it and parks it, as a
// turn at the limit does; queued accepts one that waits behind.
func parkOne(t *testing.T, db store.Store, key, id string) int64 {
	t.Helper()
	ctx := context.Background()
	res, err := db.Accept(ctx, store.Inbound{Instance: "tg", ChatID: key, MessageID: id, Message: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Begin(ctx, key, res.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Park(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	return res.ID
}

func queued(t *testing.T, db store.Store, key, id string) {
	t.Helper()
	ctx := context.Background()
	res, err := db.Accept(ctx, store.Inbound{Instance: "tg", ChatID: key, MessageID: id, Message: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Enqueue(ctx, res.ID, key); err != nil {
		t.Fatal(err)
	}
}

// TestPauseUntilTheReset: a hit with a reset pauses until then (each
// session told once), survives a restart of the host (the lease), and at
// the reset the parked entries go back to their queues and every session
// with queued messages is looked at again, parked ones first.
func TestPauseUntilTheReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	db := open(t, dir, clk)
	r := &resumes{more: make(chan struct{}, 4)}
	p := New(Options{Store: db, Clock: clk, Resume: r.resume})
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := p.Paused(); ok {
		t.Fatal("paused at start")
	}
	parkOne(t, db, "s1", "1")
	queued(t, db, "s1", "2")
	queued(t, db, "s3", "3")
	parkOne(t, db, "s2", "4")
	reset := clk.Now().Add(90 * time.Minute)
	if got := p.Hit(ctx, reset, "usage_limit"); !got.Equal(reset) {
		t.Fatalf("paused until %v, want %v", got, reset)
	}
	if p.Hit(ctx, clk.Now().Add(time.Minute), "usage_limit"); true {
		if until, _, _ := p.Paused(); !until.Equal(reset) {
			t.Fatalf("a shorter hit shortened the pause to %v", until)
		}
	}
	if !p.Tell("s1") || p.Tell("s1") || !p.Tell("s2") {
		t.Error("each session is told once a pause")
	}
	p.Close()

	// The host restarts during the pause.
	p2 := New(Options{Store: db, Clock: clk, Resume: r.resume})
	if err := p2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if until, why, ok := p2.Paused(); !ok || !until.Equal(reset) || why != "usage_limit" {
		t.Fatalf("after a restart: %v %q %v", until, why, ok)
	}
	if p2.Tell("s1") || !p2.Tell("s3") {
		t.Error("after a restart, s1 is told again or s3 is not")
	}
	clk.Advance(90 * time.Minute)
	if got := r.wait(t); fmt.Sprint(got[:2]) != "[s1 s2]" || len(got) != 3 || got[2] != "s3" {
		t.Fatalf("sessions looked at %v; want the parked s1 s2, then s3", got)
	}
	if _, _, ok := p2.Paused(); ok {
		t.Error("still paused after the reset")
	}
	if pend, _ := db.ListPending(ctx, "s1", 0); len(pend) != 2 || pend[0].MessageID != "1" {
		t.Errorf("s1's queue after the reset: %+v", pend)
	}
	if !p2.Tell("s1") {
		t.Error("a new pause tells again")
	}
}

// TestBackoffWithoutReset: a limit without a reset time backs off 1, 2,
// 4 … minutes up to 30, and from 1 minute again once a turn got through;
// /resume ends a pause at once.
func TestBackoffWithoutReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	db := open(t, t.TempDir(), clk)
	r := &resumes{more: make(chan struct{}, 16)}
	p := New(Options{Store: db, Clock: clk, Resume: r.resume})
	var got []time.Duration
	for range 7 {
		start := clk.Now()
		until := p.Hit(ctx, time.Time{}, "rate_limited")
		got = append(got, until.Sub(start))
		parkOne(t, db, "s", fmt.Sprint(clk.Now().UnixNano()))
		clk.Advance(until.Sub(start))
		r.wait(t)
	}
	if fmt.Sprint(got) != "[1m0s 2m0s 4m0s 8m0s 16m0s 30m0s 30m0s]" {
		t.Errorf("backoff %v", got)
	}
	p.OK()
	if until := p.Hit(ctx, time.Time{}, "rate_limited"); until.Sub(clk.Now()) != time.Minute {
		t.Errorf("after a turn got through: %v", until.Sub(clk.Now()))
	}
	if !p.Resume(ctx) {
		t.Fatal("Resume: nothing was paused")
	}
	if _, _, ok := p.Paused(); ok || p.Resume(ctx) {
		t.Error("paused after /resume")
	}
}

// failingUnpark is the store whose Unpark fails the first n times; each
// call says so on calls.
type failingUnpark struct {
	store.Store
	mu    sync.Mutex
	n     int
	calls chan error
}

func (s *failingUnpark) Unpark(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	fail := s.n > 0
	s.n--
	s.mu.Unlock()
	if fail {
		err := fmt.Errorf("disk full")
		s.calls <- err
		return nil, err
	}
	keys, err := s.Store.Unpark(ctx)
	s.calls <- err
	return keys, err
}

// TestPauseOutlastsAFailedRelease: when the parked entries cannot go back
// to their queues at the pause's end, the pause goes on (a newer message
// of their chat would run ahead of them) and its end is tried again a
// minute later, when they go back and their sessions are looked at.
func TestPauseOutlastsAFailedRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	db := &failingUnpark{Store: open(t, t.TempDir(), clk), n: 1, calls: make(chan error, 4)}
	r := &resumes{more: make(chan struct{}, 4)}
	p := New(Options{Store: db, Clock: clk, Resume: r.resume})
	parkOne(t, db, "s1", "1")
	p.Hit(ctx, clk.Now().Add(time.Hour), "usage_limit")
	if !p.Tell("s1") {
		t.Fatal("s1 not told")
	}
	call := func() error {
		t.Helper()
		select {
		case err := <-db.calls:
			return err
		case <-time.After(5 * time.Second): // a bound on a failing test
			t.Fatal("the pause's end did not release the parked entries")
			return nil
		}
	}
	clk.Advance(time.Hour)
	if call() == nil {
		t.Fatal("the first release did not fail")
	}
	if !clk.BlockUntil(1, 5*time.Second) { // the pause's timer armed again
		t.Fatal("no new end for the pause")
	}
	if until, _, ok := p.Paused(); !ok || !until.Equal(clk.Now().Add(FirstBackoff)) {
		t.Fatalf("after a failed release: paused %v until %v, want a minute more", ok, until)
	}
	if p.Tell("s1") {
		t.Error("s1 told twice in one pause")
	}
	if !p.Released() {
		t.Error("Released false after a pause's end")
	}
	clk.Advance(FirstBackoff)
	if err := call(); err != nil {
		t.Fatal(err)
	}
	if got := r.wait(t); fmt.Sprint(got) != "[s1]" {
		t.Errorf("sessions looked at %v", got)
	}
	if _, _, ok := p.Paused(); ok {
		t.Error("still paused after the release")
	}
}
