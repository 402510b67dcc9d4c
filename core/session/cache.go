package session

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/clawhost/clawhost/core/store"
)

// A turn reads its session's metadata several times (the "+elapsed" of the
// envelope, the overrides, the always-allowed rules, the token counts), and
// the JSON changes only when a turn ends, with a value just encoded here.
// Decoding it each time was ~9 % of the in-process pipeline's CPU
// (BenchmarkPipeline, CPU profile), so a Cache keeps each session's decoded
// metadata with the JSON text it was decoded from (or encoded to), and uses
// it while the session's row still holds that text.

// DefaultCacheSize bounds a cache: the sessions of about as many chats as
// the store's own session cache keeps.
const DefaultCacheSize = 1024

// Cache remembers decoded metadata by session key. The composer owns one
// and passes it to the stages that read sessions. A nil *Cache decodes
// every time. It is safe for concurrent use.
type Cache struct {
	max int
	mu  sync.Mutex
	m   map[string]decoded // by session key
}

type decoded struct {
	raw  string
	meta Meta
	ok   bool // raw decoded without error
}

// NewCache returns a cache of at most max sessions (DefaultCacheSize when
// max <= 0); full, an arbitrary entry makes room.
func NewCache(max int) *Cache {
	if max <= 0 {
		max = DefaultCacheSize
	}
	// The map grows with use: room for max sessions from the start was
	// 53 KB of an idle host's heap that a host with a few chats never fills.
	return &Cache{max: max, m: make(map[string]decoded)}
}

// Decode decodes session key's metadata raw, as json.Unmarshal into a zero
// Meta would (a malformed text leaves what was decoded before the error,
// and ok false). The result is the caller's: its slices are not shared.
// Key "" is not cached.
func (c *Cache) Decode(key string, raw []byte) (Meta, bool) {
	if len(raw) == 0 {
		return Meta{}, false // as json.Unmarshal: unexpected end of input
	}
	d, hit := c.get(key)
	if !hit || d.raw != string(raw) { // key "" is never remembered
		d = decoded{raw: string(raw)}
		d.ok = json.Unmarshal(raw, &d.meta) == nil
		c.remember(key, d)
	}
	return own(d.meta), d.ok
}

// Of is the metadata of the session row s (zero when it has none or it
// does not decode).
func (c *Cache) Of(s store.Session) Meta {
	m, _ := c.Decode(s.Key, s.Chat)
	return m
}

// Encode encodes m for session key's row and remembers it, so that the
// next reads of it need no decoding.
func (c *Cache) Encode(key string, m Meta) ([]byte, error) {
	b, err := json.Marshal(m)
	if err == nil {
		c.remember(key, decoded{raw: string(b), meta: own(m), ok: true})
	}
	return b, err
}

func (c *Cache) get(key string) (decoded, bool) {
	if c == nil {
		return decoded{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[key]
	return d, ok
}

func (c *Cache) remember(key string, d decoded) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k := range c.m { // an arbitrary one
			delete(c.m, k)
			break
		}
	}
	c.m[key] = d
}

// own copies the slices of m, so that neither the cache nor a caller sees
// the other's appends.
func own(m Meta) Meta {
	m.Always = slices.Clone(m.Always)
	m.Past = slices.Clone(m.Past)
	return m
}
