package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// fakeSync stands in for the WAL's fsync: each call reports that it
// started and waits until the test releases it with the error to return.
type fakeSync struct {
	started chan struct{}
	release chan error
}

func newFakeSync() *fakeSync {
	return &fakeSync{started: make(chan struct{}, 16), release: make(chan error)}
}

func (f *fakeSync) sync() error {
	f.started <- struct{}{}
	return <-f.release
}

// openSynced opens a store whose writer syncs with f instead of fsync.
func openSynced(t *testing.T, f *fakeSync) *DB {
	t.Helper()
	d, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Before any write: the syncer reads it only after a write reached it.
	d.w.sync = f.sync
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { d.Close(); close(done) }()
		for {
			select {
			case <-done:
				return
			case <-f.started:
				f.release <- nil
			}
		}
	})
	return d
}

func nop(*wtx) error { return nil }

// returns runs write in a goroutine and returns the channel its result
// arrives on.
func returns(write func(context.Context, func(*wtx) error) error) chan error {
	ch := make(chan error, 1)
	go func() { ch <- write(context.Background(), nop) }()
	return ch
}

func waitFor(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func result(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("a write did not return")
	}
	return nil
}

func pending(ch <-chan error) bool {
	select {
	case err := <-ch:
		_ = err
		return false
	default:
		return true
	}
}

// TestDurableWritesWaitForTheSync: a durable write returns only after a
// sync that started after its commit; a plain write does not wait for any
// sync, not even one running; durable writes committed while a sync runs
// share the next one; a failed sync is the durable write's error.
func TestDurableWritesWaitForTheSync(t *testing.T) {
	f := newFakeSync()
	d := openSynced(t, f)

	first := returns(d.w.durable)
	waitFor(t, "the first sync", f.started)
	if !pending(first) {
		t.Fatal("a durable write returned before its sync ended")
	}
	// A sync is running: plain writes commit and return meanwhile.
	for range 3 {
		if err := result(t, returns(d.w.do)); err != nil {
			t.Fatal(err)
		}
	}
	// Two durable writes commit while the first sync runs: the writer is
	// held until both are queued, then commits them.
	hold, held := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- d.w.do(context.Background(), func(*wtx) error { close(held); <-hold; return nil })
	}()
	<-held
	second, third := returns(d.w.durable), returns(d.w.durable)
	for len(d.w.reqs) < 2 {
		runtime.Gosched()
	}
	close(hold)
	if err := result(t, holder); err != nil {
		t.Fatal(err)
	}
	// A plain write returns once their batch committed.
	if err := result(t, returns(d.w.do)); err != nil {
		t.Fatal(err)
	}
	if !pending(second) || !pending(third) {
		t.Fatal("durable writes returned while the sync before them ran")
	}
	f.release <- nil
	if err := result(t, first); err != nil {
		t.Fatal(err)
	}
	// One more sync covers both.
	waitFor(t, "the second sync", f.started)
	if !pending(second) || !pending(third) {
		t.Fatal("durable writes returned before their sync ended")
	}
	f.release <- nil
	if err := result(t, second); err != nil {
		t.Fatal(err)
	}
	if err := result(t, third); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.started:
		t.Fatal("a third sync for two writes that committed together")
	default:
	}

	// A failing sync fails the durable write.
	failed := returns(d.w.durable)
	waitFor(t, "the failing sync", f.started)
	f.release <- errors.New("input/output error")
	if err := result(t, failed); err == nil || !strings.Contains(err.Error(), "fsync: input/output error") {
		t.Fatalf("write with a failed sync: %v", err)
	}
}

// TestNormalDoesNotSync: with Synchronous "NORMAL" no write waits for a
// sync (there is none).
func TestNormalDoesNotSync(t *testing.T) {
	d, err := Open(context.Background(), t.TempDir(), Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.w.sync != nil || d.wal != nil {
		t.Fatal("NORMAL opened the WAL for syncing")
	}
	if err := d.w.durable(context.Background(), nop); err != nil {
		t.Fatal(err)
	}
}

// TestAcceptEarlyReturnsAtTheCommit: AcceptEarly returns once the message
// is committed, while its sync has not ended: the entry is readable and
// a redelivery is a duplicate; synced returns only after a sync that
// started after the commit, with its error; Accept waits for that sync.
func TestAcceptEarlyReturnsAtTheCommit(t *testing.T) {
	f := newFakeSync()
	d := openSynced(t, f)
	ctx := context.Background()
	in := store.Inbound{Instance: "tg", ChatID: "1", MessageID: "m1", Message: []byte(`{}`)}

	res, synced, err := d.AcceptEarly(ctx, in)
	if err != nil || res.Duplicate || res.ID == 0 {
		t.Fatalf("AcceptEarly = %+v, %v", res, err)
	}
	waitFor(t, "the accept's sync", f.started)
	// Committed, not yet durable: another reader sees it.
	if e, err := d.Entry(ctx, res.ID); err != nil || e.State != store.StateAccepted {
		t.Fatalf("entry while its sync runs: %+v, %v", e, err)
	}
	syncedErr := make(chan error, 1)
	go func() { syncedErr <- synced() }()
	if !pending(syncedErr) {
		t.Fatal("synced returned before the sync ended")
	}
	// A redelivery meanwhile is a duplicate, durable only with a later sync.
	accepted := make(chan error, 1)
	go func() {
		r, err := d.Accept(ctx, in)
		if err == nil && (!r.Duplicate || r.ID != res.ID) {
			err = fmt.Errorf("redelivery: %+v", r)
		}
		accepted <- err
	}()
	f.release <- nil
	if err := result(t, syncedErr); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the duplicate's sync", f.started)
	if !pending(accepted) {
		t.Fatal("Accept returned before its sync ended")
	}
	f.release <- nil
	if err := result(t, accepted); err != nil {
		t.Fatal(err)
	}

	// A failed sync is synced's error, the commit stays.
	res, synced, err = d.AcceptEarly(ctx, store.Inbound{Instance: "tg", ChatID: "1", MessageID: "m2"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failing sync", f.started)
	go func() { syncedErr <- synced() }()
	f.release <- errors.New("input/output error")
	if err := result(t, syncedErr); err == nil || !strings.Contains(err.Error(), "fsync: input/output error") {
		t.Fatalf("synced after a failed sync: %v", err)
	}
	if _, err := d.Entry(ctx, res.ID); err != nil {
		t.Fatalf("the entry after a failed sync: %v", err)
	}
}

// TestAcceptEarlyFailsWithItsCommit: an Accept that does not commit is
// AcceptEarly's error.
func TestAcceptEarlyFailsWithItsCommit(t *testing.T) {
	d := openSynced(t, newFakeSync())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := d.AcceptEarly(ctx, store.Inbound{Instance: "tg", ChatID: "1", MessageID: "m1"}); err == nil {
		t.Fatalf("AcceptEarly with a cancelled context: %v", err)
	}
	if _, _, err := d.AcceptEarly(context.Background(), store.Inbound{ChatID: "1"}); err == nil {
		t.Fatal("AcceptEarly without an instance")
	}
}
