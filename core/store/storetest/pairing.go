package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testPairing: codes per sender, the pending cap, case-insensitive
// approval, expiry.
func testPairing(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	r, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "42", TTL: time.Hour})
	if err != nil || !r.Created || len(r.Code.Code) != 8 || !r.Code.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("RequestPairing = %+v, %v", r, err)
	}
	again, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "42"})
	if again.Created || again.Code.Code != r.Code.Code {
		t.Fatalf("second request = %+v, want the same code", again)
	}
	r43, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "43"})
	d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "44", Code: "fixed01"})
	if _, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "45"}); !errors.Is(err, store.ErrTooManyPending) {
		t.Fatalf("fourth pending: %v", err)
	}
	if _, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "dc", SenderID: "45"}); err != nil {
		t.Fatalf("other instance: %v", err)
	}
	if p, _ := d.PendingPairings(ctx, "tg"); len(p) != 3 {
		t.Fatalf("pending tg = %d, want 3", len(p))
	}
	if p, _ := d.PendingPairings(ctx, ""); len(p) != 4 {
		t.Fatalf("pending all = %d, want 4", len(p))
	}
	if ok, _ := d.IsApproved(ctx, "tg", "42"); ok {
		t.Fatal("approved before approval")
	}
	a, err := d.ApprovePairing(ctx, " "+strings.ToLower(r.Code.Code)+" ")
	if err != nil || a.Entry() != "tg:42" || !a.ApprovedAt.Equal(clk.Now()) {
		t.Fatalf("ApprovePairing = %+v, %v", a, err)
	}
	if ok, _ := d.IsApproved(ctx, "tg", "42"); !ok {
		t.Fatal("not approved after approval")
	}
	if _, err := d.ApprovePairing(ctx, r.Code.Code); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("code reused: %v", err)
	}
	if a, err := d.ApprovePairing(ctx, "FIXED01"); err != nil || a.Entry() != "tg:44" {
		t.Fatalf("approve given code = %+v, %v", a, err)
	}
	// Expiry.
	clk.Advance(time.Hour)
	p43, _ := d.PendingPairings(ctx, "tg")
	if len(p43) != 0 {
		t.Fatalf("expired codes listed: %+v", p43)
	}
	code43 := r43.Code.Code
	if _, err := d.ApprovePairing(ctx, code43); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("approve expired: %v", err)
	}
	if _, err := d.ApprovePairing(ctx, code43); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired code not deleted: %v", err)
	}
	if r2, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "45"}); !r2.Created {
		t.Fatal("expired codes still count toward the cap")
	}
	for _, sender := range []string{"42", "44"} {
		if ok, _ := d.IsApproved(ctx, "tg", sender); !ok {
			t.Fatalf("tg:%s not approved", sender)
		}
	}
}
