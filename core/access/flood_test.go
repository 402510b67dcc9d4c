package access

import (
	"testing"
	"time"
)

// TestFloodBurst: 100 messages in a burst from one sender at "20/min" —
// 20 pass, the sender is told once, the other 79 are refused silently;
// another sender is unaffected; the bucket refills at one every 3 s and
// the notice comes again only a window later.
func TestFloodBurst(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f := NewFlood(20, time.Minute, func() time.Time { return now })
	passed, told := 0, 0
	for range 100 {
		ok, tell := f.Allow("tg:1")
		if ok {
			passed++
		}
		if tell {
			told++
		}
	}
	if passed != 20 || told != 1 {
		t.Fatalf("burst of 100: %d passed, told %d times; want 20 and 1", passed, told)
	}
	if ok, _ := f.Allow("tg:2"); !ok {
		t.Error("another sender was limited")
	}
	now = now.Add(3 * time.Second)
	if ok, _ := f.Allow("tg:1"); !ok {
		t.Error("one message 3 s later")
	}
	if ok, tell := f.Allow("tg:1"); ok || tell {
		t.Errorf("the next: ok %v tell %v; want refused, not told again within the window", ok, tell)
	}
	now = now.Add(time.Minute)
	for range 20 {
		if ok, _ := f.Allow("tg:1"); !ok {
			t.Fatal("a full bucket after a window")
		}
	}
	if _, tell := f.Allow("tg:1"); !tell {
		t.Error("told again a window after the first notice")
	}
	var none *Flood
	if ok, _ := none.Allow("x"); !ok {
		t.Error("nil flood limit")
	}
}
