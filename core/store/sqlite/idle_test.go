package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/storetest"
)

// TestIdleWatch: the release comes after idleChecks ticks without a
// statement, once per idle period; any statement starts a new period.
func TestIdleWatch(t *testing.T) {
	t.Parallel()
	w := idleWatch{last: 5}
	var got []bool
	for _, n := range []int64{5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 7} {
		got = append(got, w.tick(n))
	}
	want := []bool{false, false, false, true, false, false, false, false, false, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tick %d: release %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}

// TestIdleReleaseClosesReaders: an idle store closes its readers, and
// reads and writes go on after it (a reader is opened again).
func TestIdleReleaseClosesReaders(t *testing.T) {
	ctx := context.Background()
	d := openWithReader(t)

	released := make(chan struct{}, 1)
	d.released = func() { released <- struct{}{} }
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { d.releaseIdle(20*time.Millisecond, done); close(stopped) }()
	defer func() { close(done); <-stopped }()
	select {
	case <-released:
	case <-time.After(30 * time.Second):
		t.Fatal("no release after 30 s idle")
	}
	if n := d.rdb.Stats().OpenConnections; n != 0 {
		t.Fatalf("%d readers open after the release, want 0", n)
	}
	id := storetest.MustAccept(t, d, storetest.Msg(2))
	if _, err := d.Entry(ctx, id); err != nil {
		t.Fatalf("read after the release: %v", err)
	}
}

// TestReleaseMemoryNow: ReleaseMemory does at once what the idle release
// does (the readers closed), and the store goes on serving.
func TestReleaseMemoryNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openWithReader(t)
	d.ReleaseMemory()
	if n := d.rdb.Stats().OpenConnections; n != 0 {
		t.Fatalf("%d readers open after ReleaseMemory, want 0", n)
	}
	id := storetest.MustAccept(t, d, storetest.Msg(2))
	if _, err := d.Entry(ctx, id); err != nil {
		t.Fatalf("read after ReleaseMemory: %v", err)
	}
}

// openWithReader is a store without its own idle release, with one
// message and a reader opened by a read; closed with the test.
func openWithReader(t *testing.T) *DB {
	t.Helper()
	d, err := Open(context.Background(), t.TempDir(), Options{Synchronous: "NORMAL", IdleRelease: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	storetest.MustAccept(t, d, storetest.Msg(1))
	if _, err := d.CountPending(context.Background(), "chat"); err != nil {
		t.Fatal(err)
	}
	if n := d.rdb.Stats().OpenConnections; n == 0 {
		t.Fatal("no reader open after a read")
	}
	return d
}
