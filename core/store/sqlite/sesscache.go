package sqlite

import (
	"bytes"
	"sync"

	"github.com/clawhost/clawhost/core/store"
)

// sessionCacheSize bounds the sessions kept in memory: the chats active
// now, not every session ever stored (their rows stay on disk).
const sessionCacheSize = 1024

// sessionCache holds sessions as last committed, so that a turn's read of
// its session at start and UpdateSession's read before it writes cost no
// query. The writer is the only writer of sessions and this process the
// only user of the database (the directory lock): the writer publishes
// the sessions a transaction wrote right after its commit, in commit order,
// and a read from the table is cached only when nothing was published
// since the read began (it may have read the row before that commit). So
// an entry is always the session as last committed, or absent.
type sessionCache struct {
	mu        sync.Mutex
	m         map[string]store.Session
	published uint64 // publications so far
}

func newSessionCache() *sessionCache { return &sessionCache{m: map[string]store.Session{}} }

// get returns the cached session and, on a miss, the stamp to pass to
// fill with what the caller then reads from the table.
func (c *sessionCache) get(key string) (store.Session, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[key]; ok {
		return clone(s), true, 0
	}
	return store.Session{}, false, c.published
}

// fill caches a session read from the table under the stamp get gave.
func (c *sessionCache) fill(s store.Session, stamp uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.published != stamp {
		return
	}
	if _, ok := c.m[s.Key]; !ok {
		c.add(clone(s))
	}
}

// publish caches the sessions a transaction wrote, once it committed; only
// the writer calls it, in commit order.
func (c *sessionCache) publish(wrote map[string]store.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published++
	for _, s := range wrote {
		c.add(s) // already the transaction's own copy
	}
}

// release drops every entry: the store's idle release (idle.go). An idle host
// needs none of them, and what the cache holds pins far more memory than
// its own size: each entry was allocated while its chat was active, among
// that turn's garbage, so each keeps a partly used span of the heap
// resident (10,000 chats' sessions, 1,024 cached: 1.4 MB of entries, with
// the gateway's own cache of their metadata, kept 7 MB of spans;
// BenchmarkGatewaySessionsRSS). A new map, not a cleared one: the old one's
// buckets go too. The next read of a session reads its row; a fill under a
// stamp taken before the release still holds the row as last committed.
func (c *sessionCache) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = map[string]store.Session{}
}

func (c *sessionCache) add(s store.Session) {
	if _, ok := c.m[s.Key]; !ok && len(c.m) >= sessionCacheSize {
		for k := range c.m { // any one: the map's order is random
			delete(c.m, k)
			break
		}
	}
	c.m[s.Key] = s
}

func clone(s store.Session) store.Session {
	s.Chat = bytes.Clone(s.Chat)
	return s
}
