package sqlite

import (
	"strconv"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// TestSessionCacheOrder: the rules that keep the cache from going behind a
// committed write.
func TestSessionCacheOrder(t *testing.T) {
	c := newSessionCache()
	// A read that a write's publication overtook is not cached: it may
	// have read the row before that commit.
	_, ok, stamp := c.get("k")
	if ok {
		t.Fatal("hit in an empty cache")
	}
	c.publish(store.Session{Key: "k", Turns: 2}, c.seq.Add(1))
	c.fill(store.Session{Key: "k", Turns: 1}, stamp)
	if s, _, _ := c.get("k"); s.Turns != 2 {
		t.Fatalf("turns %d after a late read, want 2", s.Turns)
	}
	// Two writes publishing out of order: the later write stays.
	first, second := c.seq.Add(1), c.seq.Add(1)
	c.publish(store.Session{Key: "k", Turns: 4}, second)
	c.publish(store.Session{Key: "k", Turns: 3}, first)
	if s, _, _ := c.get("k"); s.Turns != 4 {
		t.Fatalf("turns %d, want the later write's 4", s.Turns)
	}
	// A read with nothing published meanwhile is cached; a write after
	// it wins.
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
	c.publish(store.Session{Key: "r", Turns: 8}, c.seq.Add(1))
	if s, _, _ := c.get("r"); s.Turns != 8 {
		t.Fatalf("turns %d, want 8", s.Turns)
	}
	// A failed write forgets the key.
	c.drop("r")
	if _, ok, _ := c.get("r"); ok {
		t.Fatal("kept after a failed write")
	}
	// Bounded.
	for i := range sessionCacheSize + 100 {
		c.publish(store.Session{Key: strconv.Itoa(i)}, c.seq.Add(1))
	}
	if n := len(c.m); n > sessionCacheSize {
		t.Fatalf("%d cached, bound %d", n, sessionCacheSize)
	}
}
