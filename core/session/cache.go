package session

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime"
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

// IdleRelease is how long a cache that lets go when idle (ReleaseWhenIdle)
// goes unused before it drops every entry: as long as the store waits
// before its own idle release (core/store/sqlite), which drops its cache of
// the same sessions.
const IdleRelease = time.Minute

// Cache remembers decoded metadata by session key. The composer owns one
// and passes it to the stages that read sessions. A nil *Cache decodes
// every time. It is safe for concurrent use.
type Cache struct {
	max int
	mu  sync.Mutex
	m   map[string]decoded // by session key

	// Set by ReleaseWhenIdle: clock and idle; timer is armed while the
	// cache holds entries, used says it was read or written since.
	clock tstime.Clock
	idle  time.Duration
	timer tstime.Timer
	used  bool
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
	c.used = true
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
	c.used = true
	if c.clock != nil && c.timer == nil {
		c.timer = c.clock.AfterFunc(c.idle, c.expire)
	}
}

// ReleaseWhenIdle makes c drop every entry once it went unused (no Decode,
// Of or Encode) for d: between d and 2d after its last use. An idle host
// needs none of them, and what the cache holds pins far more memory than
// its own size: each entry was allocated while its chat was active, among
// that turn's garbage, so each keeps a partly used span of the heap
// resident (10,000 chats' sessions: with the store's cache of the same
// sessions, 7 MB of spans for 1.4 MB of entries;
// BenchmarkGatewaySessionsRSS). The next turn of each chat decodes its
// metadata again. It costs a timer that fires once per d while the cache
// is in use, none once it is empty.
func (c *Cache) ReleaseWhenIdle(clock tstime.Clock, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock, c.idle = clock, d
}

// expire is the idle timer: used since it was armed, it waits again;
// unused, the entries go.
func (c *Cache) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer == nil {
		return // released meanwhile
	}
	if c.used {
		c.used = false
		c.timer.Reset(c.idle)
		return
	}
	c.drop()
}

// Release drops every entry now (and stops the idle timer).
func (c *Cache) Release() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
}

// drop empties the cache: a new map, so that the old one's buckets go too.
func (c *Cache) drop() {
	c.m = make(map[string]decoded)
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.used = false
}

// own copies the slices of m, so that neither the cache nor a caller sees
// the other's appends.
func own(m Meta) Meta {
	m.Always = slices.Clone(m.Always)
	m.Past = slices.Clone(m.Past)
	return m
}
