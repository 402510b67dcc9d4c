package dedupe

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"testing"
	"time"
)

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

// openClawMessage resolves OpenClaw's MsgContext fields the way
// buildInboundDedupeKey does: provider = OriginatingChannel, else Provider,
// else Surface; peer = OriginatingTo, else To, else From, else SessionKey;
// scope from the session key.
func openClawMessage(ctx map[string]string) Message {
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := ctx[k]; v != "" {
				return v
			}
		}
		return ""
	}
	return Message{
		Scope:     ScopeOf(ctx["SessionKey"]),
		Channel:   first("OriginatingChannel", "Provider", "Surface"),
		Peer:      first("OriginatingTo", "To", "From", "SessionKey"),
		Account:   ctx["AccountId"],
		Thread:    ctx["MessageThreadId"],
		MessageID: ctx["MessageSid"],
	}
}

func TestVectorsBuildInboundDedupeKey(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "dedupe.buildInboundDedupeKey") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var ctx map[string]string
			var want *string
			vectors.Unmarshal(t, tc.Input, &ctx)
			vectors.Unmarshal(t, tc.Expected, &want)
			got, ok := Key(openClawMessage(ctx))
			if ok != (want != nil) || (ok && got != *want) {
				t.Errorf("got %q %v, want %v", got, ok, want)
			}
		})
	}
}

func TestVectorsCacheCheckSequence(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "dedupe.cacheCheckSequence") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var steps []struct {
				Key   string `json:"key"`
				NowMs int64  `json:"nowMs"`
			}
			var p struct {
				TTLMs   int64 `json:"ttlMs"`
				MaxSize int   `json:"maxSize"`
			}
			var want []bool
			vectors.Unmarshal(t, tc.Input, &steps)
			vectors.Unmarshal(t, tc.Params, &p)
			vectors.Unmarshal(t, tc.Expected, &want)
			clock := &fakeClock{}
			c := New(Options{TTL: time.Duration(p.TTLMs) * time.Millisecond, MaxEntries: p.MaxSize, Now: clock.Now})
			for i, s := range steps {
				clock.t = time.UnixMilli(s.NowMs)
				if got := c.Check(s.Key); got != want[i] {
					t.Errorf("step %d (%s@%d): got %v, want %v", i, s.Key, s.NowMs, got, want[i])
				}
			}
		})
	}
}

func TestVectorsClaimProtocol(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "dedupe.claimProtocol") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var want []ClaimResult
			vectors.Unmarshal(t, tc.Expected, &want)
			clock := &fakeClock{t: time.UnixMilli(1)}
			c := New(Options{Now: clock.Now})
			var got []ClaimResult
			got = append(got, c.Claim("k")) // claimed
			got = append(got, c.Claim("k")) // inflight: second concurrent delivery
			c.Commit("k")
			got = append(got, c.Claim("k")) // duplicate
			if r := c.Claim("j"); r != Claimed {
				t.Fatalf("claim j: %s", r)
			}
			c.Release("j")                  // processing failed
			got = append(got, c.Claim("j")) // claimed again: redelivery is processed
			got = append(got, c.Claim(""))  // invalid
			if len(got) != len(want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("step %d: got %s, want %s", i, got[i], want[i])
				}
			}
		})
	}
}

func TestPersistenceRoundTrip(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.UnixMilli(10_000_000)}
	c := New(Options{TTL: time.Minute, MaxEntries: 2, Now: clock.Now})
	c.Check("a")
	clock.t = clock.t.Add(10 * time.Second)
	c.Check("b")
	saved := c.Entries()
	if len(saved) != 2 || saved[0].Key != "a" || saved[1].Key != "b" {
		t.Fatalf("entries = %+v", saved)
	}
	restored := New(Options{TTL: time.Minute, MaxEntries: 2, Now: clock.Now})
	restored.Load(append(saved, Entry{Key: "old", RecordedAt: clock.t.Add(-time.Hour)}, Entry{Key: "future", RecordedAt: clock.t.Add(time.Hour)}))
	if !restored.Check("a") || !restored.Check("b") {
		t.Error("restored cache forgot entries")
	}
	clock.t = clock.t.Add(time.Minute) // the checks above refreshed a and b; now exactly one TTL later
	if restored.Check("a") {
		t.Error("a should have expired after the TTL")
	}
	if restored.Check("old") || restored.Check("future") {
		t.Error("expired or future entries must not be loaded")
	}
}
