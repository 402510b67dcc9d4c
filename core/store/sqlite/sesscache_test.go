package sqlite

import (
	"context"
	"strconv"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// TestSessionCacheOrder: the rules that keep the cache at the sessions as
// last committed.
func TestSessionCacheOrder(t *testing.T) {
	c := newSessionCache()
	// A read that a publication overtook is not cached: it may have read
	// the row before that commit.
	_, ok, stamp := c.get("k")
	if ok {
		t.Fatal("hit in an empty cache")
	}
	c.publish(map[string]store.Session{"k": {Key: "k", Turns: 2}})
	c.fill(store.Session{Key: "k", Turns: 1}, stamp)
	if s, _, _ := c.get("k"); s.Turns != 2 {
		t.Fatalf("turns %d after a late read, want 2", s.Turns)
	}
	// A read with nothing published meanwhile is cached; a later
	// publication replaces it.
	_, _, stamp = c.get("r")
	c.fill(store.Session{Key: "r", Turns: 7, Chat: []byte("x")}, stamp)
	s, ok, _ := c.get("r")
	if !ok || s.Turns != 7 {
		t.Fatalf("read not cached: %v %+v", ok, s)
	}
	s.Chat[0] = 'y' // the caller's copy
	if s2, _, _ := c.get("r"); string(s2.Chat) != "x" {
		t.Fatal("the cache shares its bytes with a caller")
	}
	c.publish(map[string]store.Session{"r": {Key: "r", Turns: 8}})
	if s, _, _ := c.get("r"); s.Turns != 8 {
		t.Fatalf("turns %d, want 8", s.Turns)
	}
	// Bounded.
	for i := range sessionCacheSize + 100 {
		c.publish(map[string]store.Session{strconv.Itoa(i): {Key: strconv.Itoa(i)}})
	}
	if n := len(c.m); n > sessionCacheSize {
		t.Fatalf("%d cached, bound %d", n, sessionCacheSize)
	}
}

// TestRolledBackSessionIsNotCached: a session written by a write whose
// batch failed is neither cached nor stored; the next read and write see
// the row as committed.
func TestRolledBackSessionIsNotCached(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir(), Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.UpdateSession(ctx, "k", func(s *store.Session, _ bool) error { s.Turns = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	// The write runs, then its transaction fails: rolled back.
	err = db.w.do(ctx, func(tx *wtx) error {
		s, _ := tx.session("k")
		s.Turns = 99
		if _, err := sessions.Write(tablesTx{tx}, s, true); err != nil {
			return err
		}
		tx.wroteSession(s)
		_, err := tx.exec(`INSERT INTO no_such_table VALUES (1)`)
		return err
	})
	if err == nil {
		t.Fatal("the failing write succeeded")
	}
	got, err := db.Session(ctx, "k")
	if err != nil || got.Turns != 1 {
		t.Fatalf("session after the rollback: %+v %v, want 1 turn", got, err)
	}
	after, err := db.UpdateSession(ctx, "k", func(s *store.Session, found bool) error {
		if !found || s.Turns != 1 {
			t.Errorf("update read found=%v turns=%d, want the committed 1", found, s.Turns)
		}
		s.Turns++
		return nil
	})
	if err != nil || after.Turns != 2 {
		t.Fatalf("after: %+v %v", after, err)
	}
}

// TestReleaseMemoryDropsSessionCache: the idle release empties the session
// cache, and the store goes on serving every session as last committed
// (read from its row, then cached again).
func TestReleaseMemoryDropsSessionCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openWithReader(t)
	for _, k := range []string{"a", "b"} {
		if _, err := d.UpdateSession(ctx, k, func(s *store.Session, _ bool) error { s.Turns = 3; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := d.sessions.get("a"); !ok {
		t.Fatal("a written session is not cached")
	}
	d.ReleaseMemory()
	if n := len(d.sessions.m); n != 0 {
		t.Fatalf("%d sessions cached after the release, want 0", n)
	}
	if got, err := d.Session(ctx, "a"); err != nil || got.Turns != 3 {
		t.Fatalf("session a after the release: %+v %v, want 3 turns", got, err)
	}
	if _, ok, _ := d.sessions.get("a"); !ok {
		t.Fatal("a session read after the release is not cached again")
	}
	if _, err := d.UpdateSession(ctx, "b", func(s *store.Session, _ bool) error { s.Turns++; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Session(ctx, "b"); err != nil || got.Turns != 4 {
		t.Fatalf("session b after the release and an update: %+v %v, want 4 turns", got, err)
	}
}
