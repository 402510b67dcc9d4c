package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testLeases: a lease is held by one holder until it expires on the
// engine's clock; renewals keep the epoch, takeovers increment it; a
// release frees it at once; of holders racing for a free lease one wins.
func testLeases(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	req := func(name, holder string) store.LeaseRequest {
		return store.LeaseRequest{Name: name, Holder: holder, TTL: 10 * time.Second, Info: holder + " info"}
	}
	start := h.clk.Now()
	l, err := d.AcquireLease(ctx, req("channel/tg", "h1"))
	if err != nil || l.Holder != "h1" || l.Epoch != 1 || l.Info != "h1 info" || !l.Acquired.Equal(start) || !l.Expires.Equal(start.Add(10*time.Second)) {
		t.Fatalf("first acquire: %+v, %v", l, err)
	}
	// Another holder is refused while it lives, and told who holds it.
	h.clk.Advance(9 * time.Second)
	l, err = d.AcquireLease(ctx, req("channel/tg", "h2"))
	if !errors.Is(err, store.ErrLeaseHeld) || l.Holder != "h1" || l.Epoch != 1 {
		t.Fatalf("acquire of a held lease: %+v, %v", l, err)
	}
	// The holder renews: same epoch and acquired time, later expiry.
	l, err = d.AcquireLease(ctx, req("channel/tg", "h1"))
	if err != nil || l.Epoch != 1 || !l.Acquired.Equal(start) || !l.Renewed.Equal(h.clk.Now()) || !l.Expires.Equal(h.clk.Now().Add(10*time.Second)) {
		t.Fatalf("renew: %+v, %v", l, err)
	}
	// Not renewed: it expires exactly at Expires, and a takeover
	// increments the epoch.
	h.clk.Advance(9 * time.Second)
	if _, err := d.AcquireLease(ctx, req("channel/tg", "h2")); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("acquire 1s before expiry: %v", err)
	}
	h.clk.Advance(time.Second)
	l, err = d.AcquireLease(ctx, req("channel/tg", "h2"))
	if err != nil || l.Holder != "h2" || l.Epoch != 2 || !l.Acquired.Equal(h.clk.Now()) {
		t.Fatalf("takeover of an expired lease: %+v, %v", l, err)
	}
	if _, err := d.AcquireLease(ctx, req("channel/tg", "h1")); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("the old holder renews after the takeover: %v", err)
	}
	// Release by someone else changes nothing; by the holder frees it.
	if err := d.ReleaseLease(ctx, "channel/tg", "h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AcquireLease(ctx, req("channel/tg", "h1")); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("a release by a non-holder freed the lease: %v", err)
	}
	if err := d.ReleaseLease(ctx, "channel/tg", "h2"); err != nil {
		t.Fatal(err)
	}
	if err := d.ReleaseLease(ctx, "channel/unknown", "h2"); err != nil {
		t.Fatalf("release of an unknown lease: %v", err)
	}
	l, err = d.AcquireLease(ctx, req("channel/tg", "h1"))
	if err != nil || l.Holder != "h1" || l.Epoch != 3 {
		t.Fatalf("acquire after release: %+v, %v", l, err)
	}
	// Invalid requests.
	for _, r := range []store.LeaseRequest{{Holder: "h1", TTL: time.Second}, {Name: "x", TTL: time.Second}, {Name: "x", Holder: "h1"}} {
		if _, err := d.AcquireLease(ctx, r); err == nil {
			t.Errorf("AcquireLease(%+v) succeeded", r)
		}
	}
	raceForLease(t, ctx, d, req("host/race", "").TTL)
	// Listing by prefix, expired leases included, by name.
	if _, err := d.AcquireLease(ctx, req("host/a", "a")); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Minute)
	ls, err := d.ListLeases(ctx, "host/")
	if err != nil || len(ls) != 2 || ls[0].Name != "host/a" || ls[1].Name != "host/race" || ls[0].Live(h.clk.Now()) {
		t.Fatalf("ListLeases(host/) = %+v, %v", ls, err)
	}
	if all, err := d.ListLeases(ctx, ""); err != nil || len(all) != 3 {
		t.Fatalf("ListLeases(\"\") = %+v, %v", all, err)
	}
	if none, err := d.ListLeases(ctx, "session/"); err != nil || none != nil {
		t.Fatalf("ListLeases(session/) = %+v, %v", none, err)
	}
	// Leases survive a restart.
	d.Close()
	d = h.open()
	if ls, err := d.ListLeases(ctx, "channel/"); err != nil || len(ls) != 1 || ls[0].Holder != "h1" || ls[0].Epoch != 3 {
		t.Fatalf("after reopen: %+v, %v", ls, err)
	}
}

// raceForLease: of holders racing for a free lease, exactly one wins.
func raceForLease(t *testing.T, ctx context.Context, d store.Store, ttl time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	wins := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("r%d", i)
			if _, err := d.AcquireLease(ctx, store.LeaseRequest{Name: "host/race", Holder: holder, TTL: ttl, Info: holder + " info"}); err == nil {
				wins <- holder
			} else if !errors.Is(err, store.ErrLeaseHeld) {
				t.Errorf("racing acquire: %v", err)
			}
		}()
	}
	wg.Wait()
	close(wins)
	if n := len(wins); n != 1 {
		t.Fatalf("%d holders won one lease", n)
	}
}
