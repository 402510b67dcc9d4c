package session

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

func TestDecodeIsUnmarshal(t *testing.T) {
	t.Parallel()
	c := NewCache(0)
	for _, raw := range []string{
		``,
		`{}`,
		`{"model":"opus","always_allow":["Bash"],"past":[{"id":"a","turns":2}],"last_message":"2026-11-23T10:00:00Z"}`,
		`{"model":"opus","prompt_tokens":"many"}`, // decoded up to the error
		`{"model":`,
		`not json`,
		`{"effort":"extreme","queue_mode":"sideways"}`, // stored values are not checked
	} {
		var want Meta
		wantOK := json.Unmarshal([]byte(raw), &want) == nil
		for _, cache := range []*Cache{c, nil} {
			for range 2 { // a miss, then a hit
				got, ok := cache.Decode("s1", []byte(raw))
				if ok != wantOK || !reflect.DeepEqual(got, want) {
					t.Errorf("Decode(%q) = %+v, %v; json.Unmarshal: %+v, %v", raw, got, ok, want, wantOK)
				}
			}
		}
	}
}

// TestDecodeCopies checks that a caller's changes (an append to the
// always-allowed rules) never reach the cache.
func TestDecodeCopies(t *testing.T) {
	t.Parallel()
	c := NewCache(0)
	raw, err := c.Encode("s1", Meta{Always: make([]string, 1, 8), Past: []PastSession{{ID: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Decode("s1", raw)
	m.Always = append(m.Always, "Write")
	m.Past[0].ID = "changed"
	again, _ := c.Decode("s1", raw)
	if len(again.Always) != 1 || again.Past[0].ID != "p" {
		t.Fatalf("the cache was changed through a caller's copy: %+v", again)
	}
}

func TestCacheIsBounded(t *testing.T) {
	t.Parallel()
	c := NewCache(16)
	for i := range 3 * 16 {
		if _, err := c.Encode(fmt.Sprint("k", i), Meta{PromptTokens: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > 16 || n == 0 {
		t.Fatalf("%d entries cached, at most 16", n)
	}
}

// TestDecodeFollowsTheRow checks that a session's cached metadata is used
// only while the row holds the text it came from: another text of the same
// session (the row changed by a writer that did not encode here, or an
// encode that was not stored) is decoded.
func TestDecodeFollowsTheRow(t *testing.T) {
	t.Parallel()
	c := NewCache(0)
	if _, err := c.Encode("s2", Meta{PromptTokens: 5}); err != nil {
		t.Fatal(err)
	}
	if m, ok := c.Decode("s2", []byte(`{"prompt_tokens":7}`)); !ok || m.PromptTokens != 7 {
		t.Fatalf("another text of the session: %+v, %v", m, ok)
	}
	if m, _ := c.Decode("", []byte(`{"prompt_tokens":9}`)); m.PromptTokens != 9 {
		t.Fatalf("uncached: %+v", m)
	}
	if len(c.m) != 1 {
		t.Fatalf("key \"\" was cached: %d entries", len(c.m))
	}
}

// TestCachesAreSeparate checks that two caches (two gateways in one
// process, as the tests run them) never see each other's entries.
func TestCachesAreSeparate(t *testing.T) {
	t.Parallel()
	a, b := NewCache(0), NewCache(0)
	if _, err := a.Encode("k", Meta{Model: "opus"}); err != nil {
		t.Fatal(err)
	}
	if len(a.m) != 1 || len(b.m) != 0 {
		t.Fatalf("entries: a %d, b %d", len(a.m), len(b.m))
	}
}

// TestCacheReleasedWhenIdle: a cache that lets go when idle keeps its
// entries while it is used, drops them once a whole period passed unused,
// arms its timer only while it holds any, and fills again on use.
func TestCacheReleasedWhenIdle(t *testing.T) {
	t.Parallel()
	clk := tstimetest.NewFake(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
	c := NewCache(0)
	c.ReleaseWhenIdle(clk, IdleRelease)
	if n := clk.Waiters(); n != 0 {
		t.Fatalf("%d timers armed by an empty cache, want 0", n)
	}
	raw, err := c.Encode("s1", Meta{Model: "opus"})
	if err != nil {
		t.Fatal(err)
	}
	if n := clk.Waiters(); n != 1 {
		t.Fatalf("%d timers armed once the cache holds an entry, want 1", n)
	}
	entries := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.m)
	}
	// Used within the period: the timer fires, sees the use and waits again.
	clk.Advance(IdleRelease - time.Second)
	if m, _ := c.Decode("s1", raw); m.Model != "opus" {
		t.Fatalf("decoded %+v", m)
	}
	clk.Advance(time.Second)
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the idle timer was not armed again after a used period")
	}
	if n := entries(); n != 1 {
		t.Fatalf("%d entries after a used period, want 1", n)
	}
	// A whole period unused: the next expiry drops everything and arms nothing.
	c.expire()
	if n := entries(); n != 0 {
		t.Fatalf("%d entries after an unused period, want 0", n)
	}
	if n := clk.Waiters(); n != 0 {
		t.Fatalf("%d timers armed by the emptied cache, want 0", n)
	}
	// Used again: decoded and cached, the timer armed again.
	if m, ok := c.Decode("s1", raw); !ok || m.Model != "opus" {
		t.Fatalf("decoded %+v %v after the release", m, ok)
	}
	if n, w := entries(), clk.Waiters(); n != 1 || w != 1 {
		t.Fatalf("%d entries and %d timers after a use, want 1 and 1", n, w)
	}
	c.Release()
	if n, w := entries(), clk.Waiters(); n != 0 || w != 0 {
		t.Fatalf("%d entries and %d timers after Release, want 0 and 0", n, w)
	}
	var none *Cache
	none.Release() // a nil cache has nothing to release
}
