package sandbox

import (
	"testing"
	"time"
)

// A system grant's kind and links are looked up once per TTL; any other path (a chat's,
// which a sandbox can change) at every look.
func TestCachedPathsOnlyTheSystemGrants(t *testing.T) {
	calls := map[string]int{}
	dir := map[string]bool{"/usr": true, "/ws": true}
	base := pathInfo{
		stat: func(p string) (bool, bool) { calls["stat "+p]++; return dir[p], true },
		real: func(p string) string { calls["real "+p]++; return p },
	}
	clock := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	paths := cachedPaths(base, func(p string) bool { return p == "/usr" }, func() time.Time { return clock }, 2*time.Second)
	look := func() {
		for _, p := range []string{"/usr", "/ws"} {
			if d, ok := paths.stat(p); !ok || d != dir[p] {
				t.Fatalf("stat %s = %v, %v", p, d, ok)
			}
			if r := paths.real(p); r != p {
				t.Fatalf("real %s = %q", p, r)
			}
		}
	}
	look()
	clock = clock.Add(time.Second)
	look()
	want := map[string]int{"stat /usr": 1, "real /usr": 1, "stat /ws": 2, "real /ws": 2}
	for k, n := range want {
		if calls[k] != n {
			t.Errorf("within the TTL: %s looked up %d times, want %d", k, calls[k], n)
		}
	}
	// The grant changes kind on the host: seen once the TTL has passed.
	dir["/usr"] = false
	clock = clock.Add(time.Second)
	if d, _ := paths.stat("/usr"); d {
		t.Error("a system grant's kind 2 s after it was looked up: the old answer")
	}
	if calls["stat /usr"] != 2 {
		t.Errorf("after the TTL: stat /usr looked up %d times, want 2", calls["stat /usr"])
	}
}

// hostPaths caches exactly the system grants.
func TestHostPathsCacheTheSystemGrants(t *testing.T) {
	if !isSystemGrant("/usr") || !isSystemGrant("/etc/resolv.conf") {
		t.Error("/usr and /etc/resolv.conf are system grants")
	}
	for _, p := range []string{"/", "/etc", "/home", "/tmp", "/usr/local", "/root/.claude"} {
		if isSystemGrant(p) {
			t.Errorf("%s is cached as a system grant", p)
		}
	}
}
