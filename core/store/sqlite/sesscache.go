package sqlite

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/clawhost/clawhost/core/store"
)

// sessionCacheSize bounds the sessions kept in memory: the chats active
// now, not every session ever stored (their rows stay on disk).
const sessionCacheSize = 2048

// sessionCache keeps recently read and written sessions, so a turn's read
// of its session at start costs no query. The writer is the only writer of
// sessions and this process the only user of the database (the directory
// lock), so the cache can only be behind a commit in flight, never wrong
// after it: a write publishes its session once committed, before
// UpdateSession returns, and a read caches what it read only when no write
// was published meanwhile (which may have been committed before the read's
// query, or after it).
type sessionCache struct {
	seq atomic.Uint64 // orders the writes' publications (taken inside the writer)

	mu        sync.Mutex
	m         map[string]cachedSession
	published uint64 // writes published (or dropped on a failed write)
}

type cachedSession struct {
	s   store.Session
	seq uint64 // 0: cached by a read
}

func newSessionCache() *sessionCache { return &sessionCache{m: map[string]cachedSession{}} }

// get returns the cached session and, on a miss, the stamp to pass to
// fill with what the caller then reads.
func (c *sessionCache) get(key string) (store.Session, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		return clone(e.s), true, 0
	}
	return store.Session{}, false, c.published
}

// fill caches a session read from the database under the stamp get gave.
func (c *sessionCache) fill(s store.Session, stamp uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.published != stamp {
		return
	}
	if _, ok := c.m[s.Key]; !ok {
		c.add(s.Key, cachedSession{s: clone(s)})
	}
}

// publish caches a committed write; seq was taken when the write ran in
// the writer, so a later write of the key is never overwritten by an
// earlier one that returns last.
func (c *sessionCache) publish(s store.Session, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published++
	if e, ok := c.m[s.Key]; !ok || e.seq < seq {
		c.add(s.Key, cachedSession{s: clone(s), seq: seq})
	}
}

// drop forgets key after a write whose outcome is unknown.
func (c *sessionCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published++
	delete(c.m, key)
}

func (c *sessionCache) add(key string, e cachedSession) {
	if _, ok := c.m[key]; !ok && len(c.m) >= sessionCacheSize {
		for k := range c.m { // any one: the map's order is random
			delete(c.m, k)
			break
		}
	}
	c.m[key] = e
}

func clone(s store.Session) store.Session {
	s.Chat = bytes.Clone(s.Chat)
	return s
}
