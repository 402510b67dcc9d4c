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
	type statEntry struct {
		dir, ok bool
		at      time.Time
	}
	type realEntry struct {
		real string
		at   time.Time
	}
	var (
		mu    sync.Mutex
		stats = map[string]statEntry{}
		reals = map[string]realEntry{}
	)
	fresh := func(at time.Time) bool { return now().Sub(at) < ttl }
	return pathInfo{
		stat: func(p string) (bool, bool) {
			if !cached(p) {
				return base.stat(p)
			}
			mu.Lock()
			e, ok := stats[p]
			mu.Unlock()
			if ok && fresh(e.at) {
				return e.dir, e.ok
			}
			at := now()
			dir, exists := base.stat(p)
			mu.Lock()
			stats[p] = statEntry{dir: dir, ok: exists, at: at}
			mu.Unlock()
			return dir, exists
		},
		real: func(p string) string {
			if !cached(p) {
				return base.real(p)
			}
			mu.Lock()
			e, ok := reals[p]
			mu.Unlock()
			if ok && fresh(e.at) {
				return e.real
			}
			at := now()
			r := base.real(p)
			mu.Lock()
			reals[p] = realEntry{real: r, at: at}
			mu.Unlock()
			return r
		},
	}
}
