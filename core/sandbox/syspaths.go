package sandbox

import (
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/realpath"
)

// systemPathsTTL is how long a system grant's stat and links are taken as looked up.
const systemPathsTTL = 2 * time.Second

// hostPaths is bwrapArgs' pathInfo on the real filesystem. A start's mount list looks
// up every path once or twice (its kind, and its links for prune), about 100 lookups,
// 0.5 ms of the host's CPU per start (perf, recycled sandboxes under load); some 40 of
// the paths are the system grants, the same in every list. Those (and only those: a
// chat's paths are what a sandbox can change, the git-plant and symlink attacks' ground)
// are looked up at most once per systemPathsTTL: root's files, which nothing inside a
// sandbox can write. What a start mounts is still opened by its name at the start (the
// helper's zygoteSources, bwrap's binds), so a system file replaced on the host is the
// new one at once; a grant that appears, goes or changes kind is seen within the TTL.
var hostPaths = cachedPaths(pathInfo{stat: statPath, real: realpath.Of}, isSystemGrant, time.Now, systemPathsTTL)

// isSystemGrant reports whether p is one of confine.SystemGrants.
func isSystemGrant(p string) bool { return systemGrantSet()[p] }

var systemGrantSet = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range confine.SystemGrants() {
		m[p] = true
	}
	return m
})

// cachedPaths is base with the answers for the paths cached says keep reused for ttl
// (by now's clock); every other path goes to base each time.
func cachedPaths(base pathInfo, cached func(string) bool, now func() time.Time, ttl time.Duration) pathInfo {
	type kind struct{ dir, ok bool }
	stats := &memo[kind]{now: now, ttl: ttl}
	reals := &memo[string]{now: now, ttl: ttl}
	return pathInfo{
		stat: func(p string) (bool, bool) {
			if !cached(p) {
				return base.stat(p)
			}
			k := stats.get(p, func() kind { d, ok := base.stat(p); return kind{d, ok} })
			return k.dir, k.ok
		},
		real: func(p string) string {
			if !cached(p) {
				return base.real(p)
			}
			return reals.get(p, func() string { return base.real(p) })
		},
	}
}

// memo keeps each key's answer for ttl.
type memo[T any] struct {
	now func() time.Time
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]memoEntry[T]
}

type memoEntry[T any] struct {
	v  T
	at time.Time
}

// get is key's answer: the kept one while younger than ttl, else look's (kept).
func (c *memo[T]) get(key string, look func() T) T {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < c.ttl {
		return e.v
	}
	at := c.now()
	v := look()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]memoEntry[T]{}
	}
	c.m[key] = memoEntry[T]{v: v, at: at}
	c.mu.Unlock()
	return v
}
