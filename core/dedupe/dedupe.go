// Package dedupe drops redelivered inbound messages: chat platforms retry
// webhooks and reconnecting clients replay recent updates, and each copy
// must produce at most one agent run.
//
// [Key] names a message by session scope, route (channel instance, chat,
// account, thread) and platform message id, in the same JSON-array form as
// OpenClaw's buildInboundDedupeKey (openclaw@2026.9.6, checked against its
// vectors). [Cache] is the in-memory TTL + LRU cache (20 minutes, 5000
// entries by default) with OpenClaw's claim / commit / release protocol. The
// durable copy lives in the store; [Cache.Entries] and [Cache.Load] move
// entries between the two so dedupe survives a restart.
//
// The clock is injected; tests never sleep.
package dedupe

import (
	"container/list"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// Message identifies one inbound message.
type Message struct {
	// Scope is the session scope, "" when there is none. For OpenClaw-format
	// keys use [ScopeOf].
	Scope string
	// Channel is the channel instance (lower-cased). Required.
	Channel string
	// Peer is the chat the message was sent to or from. Required.
	Peer string
	// Account is the receiving account, "" for the default.
	Account string
	// Thread is the thread id, "" for none.
	Thread string
	// MessageID is the platform message id. Required.
	MessageID string
}

// Key returns the dedupe key of m: the JSON array [scope, route, messageID]
// where route is the JSON array [channel, peer, account, thread]. ok is false
// (never dedupe) when Channel, Peer or MessageID is empty.
func Key(m Message) (key string, ok bool) {
	channel := strings.ToLower(strings.TrimSpace(m.Channel))
	if channel == "" || m.Peer == "" || m.MessageID == "" {
		return "", false
	}
	route, err := json.Marshal([]string{channel, m.Peer, m.Account, m.Thread})
	if err != nil {
		return "", false
	}
	out, err := json.Marshal([]string{m.Scope, string(route), m.MessageID})
	if err != nil {
		return "", false
	}
	return string(out), true
}

// ScopeOf returns the dedupe scope of a session key: "agent:<id>" for an
// OpenClaw key "agent:<id>:…", otherwise the key itself ("" stays "").
func ScopeOf(sessionKey string) string {
	parts := strings.SplitN(strings.ToLower(strings.TrimSpace(sessionKey)), ":", 3)
	if len(parts) == 3 && parts[0] == "agent" && parts[1] != "" && parts[2] != "" {
		return "agent:" + parts[1]
	}
	return sessionKey
}

// Defaults of [Options].
const (
	DefaultTTL        = 20 * time.Minute
	DefaultMaxEntries = 5000
)

// Options configure a [Cache]. Zero values take the defaults.
type Options struct {
	// TTL is how long a key is remembered after it was last seen.
	TTL time.Duration
	// MaxEntries bounds the cache; the least recently seen entry goes first.
	MaxEntries int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Entry is a remembered key, for persistence.
type Entry struct {
	Key        string
	RecordedAt time.Time
}

// ClaimResult is the outcome of [Cache.Claim].
type ClaimResult string

const (
	// Claimed: first delivery; process it, then Commit or Release.
	Claimed ClaimResult = "claimed"
	// Inflight: another delivery of the same message is being processed.
	Inflight ClaimResult = "inflight"
	// Duplicate: already processed.
	Duplicate ClaimResult = "duplicate"
	// Invalid: the message has no usable key; process it, never dedupe.
	Invalid ClaimResult = "invalid"
)

// Cache is a TTL + LRU set of seen keys. It is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	ttl      time.Duration
	max      int
	now      func() time.Time
	lru      *list.List // front = least recently seen; values are *Entry
	byKey    map[string]*list.Element
	inflight map[string]struct{}
}

// New returns an empty cache.
func New(opts Options) *Cache {
	c := &Cache{ttl: opts.TTL, max: opts.MaxEntries, now: opts.Now, lru: list.New(),
		byKey: map[string]*list.Element{}, inflight: map[string]struct{}{}}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.max <= 0 {
		c.max = DefaultMaxEntries
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Check reports whether key was seen within the TTL. A hit refreshes the
// entry's time and LRU position; a miss records the key. An empty key is
// never a duplicate and is not recorded.
func (c *Cache) Check(key string) bool {
	if key == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	hit := c.live(key, now)
	c.record(key, now)
	return hit
}

// live reports whether key is present and unexpired, dropping it if
// expired. Callers hold mu.
func (c *Cache) live(key string, now time.Time) bool {
	el, ok := c.byKey[key]
	if !ok {
		return false
	}
	if now.Sub(el.Value.(*Entry).RecordedAt) >= c.ttl {
		c.lru.Remove(el)
		delete(c.byKey, key)
		return false
	}
	return true
}

// record stores key as seen at t, most recent, evicting beyond the cap.
// Callers hold mu.
func (c *Cache) record(key string, t time.Time) {
	if el, ok := c.byKey[key]; ok {
		el.Value.(*Entry).RecordedAt = t
		c.lru.MoveToBack(el)
	} else {
		c.byKey[key] = c.lru.PushBack(&Entry{Key: key, RecordedAt: t})
	}
	for c.lru.Len() > c.max {
		oldest := c.lru.Front()
		c.lru.Remove(oldest)
		delete(c.byKey, oldest.Value.(*Entry).Key)
	}
}

// Claim starts processing a delivery. It returns Invalid for an empty key,
// Duplicate when the key was committed within the TTL (refreshing it),
// Inflight when another delivery holds the claim, and otherwise Claimed.
// A Claimed key must be finished with Commit or Release.
func (c *Cache) Claim(key string) ClaimResult {
	if key == "" {
		return Invalid
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.live(key, now) {
		c.record(key, now)
		return Duplicate
	}
	if _, busy := c.inflight[key]; busy {
		return Inflight
	}
	c.inflight[key] = struct{}{}
	return Claimed
}

// Commit records a claimed key as processed.
func (c *Cache) Commit(key string) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, key)
	c.record(key, c.now())
}

// Release gives up a claim after a failure, so a redelivery is processed.
func (c *Cache) Release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, key)
}

// Entries returns the unexpired entries, least recently seen first, for
// persisting.
func (c *Cache) Entries() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	out := make([]Entry, 0, c.lru.Len())
	for el := c.lru.Front(); el != nil; el = el.Next() {
		e := *el.Value.(*Entry)
		if now.Sub(e.RecordedAt) < c.ttl {
			out = append(out, e)
		}
	}
	return out
}

// Load seeds the cache from persisted entries. Expired entries and entries
// dated in the future are skipped; when a key appears twice the later time
// wins; the cap keeps the most recently seen. Existing entries stay.
func (c *Cache) Load(entries []Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	sorted := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e.Key == "" || e.RecordedAt.After(now) || now.Sub(e.RecordedAt) >= c.ttl {
			continue
		}
		sorted = append(sorted, e)
	}
	sortByTime(sorted)
	for _, e := range sorted {
		if el, ok := c.byKey[e.Key]; ok && !el.Value.(*Entry).RecordedAt.Before(e.RecordedAt) {
			continue
		}
		c.record(e.Key, e.RecordedAt)
	}
}

func sortByTime(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int { return a.RecordedAt.Compare(b.RecordedAt) })
}
