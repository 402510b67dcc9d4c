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
	r, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "42", SenderName: "Dave Null", SenderUsername: "dave", TTL: time.Hour})
	if err != nil || !r.Created || len(r.Code.Code) != 8 || !r.Code.ExpiresAt.Equal(clk.Now().Add(time.Hour)) ||
		r.Code.SenderName != "Dave Null" || r.Code.SenderUsername != "dave" {
		t.Fatalf("RequestPairing = %+v, %v", r, err)
	}
	again, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "42"})
	if again.Created || again.Code.Code != r.Code.Code || again.Code.SenderName != "Dave Null" || again.Code.SenderUsername != "dave" {
		t.Fatalf("second request = %+v, want the same code with the names it was made with", again)
	}
	if p, _ := d.PendingPairings(ctx, "tg"); len(p) != 1 || p[0].SenderName != "Dave Null" || p[0].SenderUsername != "dave" {
		t.Fatalf("pending with names = %+v", p)
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
	if ok, _ := d.IsApproved(ctx, "tg", "42", 0); ok {
		t.Fatal("approved before approval")
	}
	a, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: " " + strings.ToLower(r.Code.Code) + " "})
	if err != nil || a.Entry() != "tg:42" || !a.ApprovedAt.Equal(clk.Now()) {
		t.Fatalf("ApprovePairing = %+v, %v", a, err)
	}
	if ok, _ := d.IsApproved(ctx, "tg", "42", 0); !ok {
		t.Fatal("not approved after approval")
	}
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("code reused: %v", err)
	}
	if a, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: "FIXED01"}); err != nil || a.Entry() != "tg:44" {
		t.Fatalf("approve given code = %+v, %v", a, err)
	}
	// Expiry.
	clk.Advance(time.Hour)
	p43, _ := d.PendingPairings(ctx, "tg")
	if len(p43) != 0 {
		t.Fatalf("expired codes listed: %+v", p43)
	}
	code43 := r43.Code.Code
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: code43}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("approve expired: %v", err)
	}
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: code43}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired code not deleted: %v", err)
	}
	if r2, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "45"}); !r2.Created {
		t.Fatal("expired codes still count toward the cap")
	}
	for _, sender := range []string{"42", "44"} {
		if ok, _ := d.IsApproved(ctx, "tg", sender, 0); !ok {
			t.Fatalf("tg:%s not approved", sender)
		}
	}
}

// testApprovedSenders: approvals record who approved them, are listed
// oldest first, expire for IsApproved after a ttl (but stay listed), and
// are revoked — a revoked sender pairs from scratch.
func testApprovedSenders(t *testing.T, h *env) {
	clk := h.clk
	d := h.open()
	ctx := context.Background()
	approve := func(instance, sender, by string) store.ApprovedSender {
		t.Helper()
		r, err := d.RequestPairing(ctx, store.PairingRequest{Instance: instance, SenderID: sender})
		if err != nil {
			t.Fatal(err)
		}
		a, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code, By: by})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := approve("tg", "5", "tg:9")
	if first.ApprovedBy != "tg:9" || !first.ApprovedAt.Equal(clk.Now()) {
		t.Fatalf("approval = %+v", first)
	}
	clk.Advance(time.Hour)
	approve("dc", "7", "cli")
	list, err := d.ApprovedSenders(ctx, "")
	if err != nil || len(list) != 2 || list[0].Entry() != "tg:5" || list[0].ApprovedBy != "tg:9" || !list[0].ApprovedAt.Equal(first.ApprovedAt) ||
		list[1].Entry() != "dc:7" || list[1].ApprovedBy != "cli" {
		t.Fatalf("ApprovedSenders = %+v, %v", list, err)
	}
	if tg, _ := d.ApprovedSenders(ctx, "tg"); len(tg) != 1 || tg[0].Entry() != "tg:5" {
		t.Fatalf("ApprovedSenders(tg) = %+v", tg)
	}
	// TTL: tg:5 was approved an hour ago.
	for _, c := range []struct {
		ttl  time.Duration
		want bool
	}{{0, true}, {-time.Second, true}, {2 * time.Hour, true}, {time.Hour, false}, {time.Minute, false}} {
		if ok, err := d.IsApproved(ctx, "tg", "5", c.ttl); ok != c.want || err != nil {
			t.Errorf("IsApproved(ttl %v) = %v, %v; want %v", c.ttl, ok, err, c.want)
		}
	}
	// Revoking: found once; the sender is no longer approved nor listed,
	// and a pending code of theirs goes too.
	if _, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "dc", SenderID: "7"}); err != nil {
		t.Fatal(err)
	}
	if found, err := d.RevokeApproval(ctx, "dc", "7"); !found || err != nil {
		t.Fatalf("RevokeApproval = %v, %v", found, err)
	}
	if found, err := d.RevokeApproval(ctx, "dc", "7"); found || err != nil {
		t.Fatalf("second RevokeApproval = %v, %v", found, err)
	}
	if ok, _ := d.IsApproved(ctx, "dc", "7", 0); ok {
		t.Fatal("revoked sender still approved")
	}
	if p, _ := d.PendingPairings(ctx, "dc"); len(p) != 0 {
		t.Fatalf("revoked sender's pending code kept: %+v", p)
	}
	if r, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "dc", SenderID: "7"}); err != nil || !r.Created {
		t.Fatalf("pairing again after revocation = %+v, %v", r, err)
	}
	if list, _ := d.ApprovedSenders(ctx, ""); len(list) != 1 || list[0].Entry() != "tg:5" {
		t.Fatalf("after revocation: %+v", list)
	}
	// Approving again replaces the record.
	clk.Advance(time.Hour)
	again := approve("tg", "5", "admin")
	if list, _ := d.ApprovedSenders(ctx, "tg"); len(list) != 1 || list[0].ApprovedBy != "admin" || !list[0].ApprovedAt.Equal(again.ApprovedAt) {
		t.Fatalf("re-approval: %+v", list)
	}
	if ok, _ := d.IsApproved(ctx, "tg", "5", time.Minute); !ok {
		t.Fatal("a fresh approval counts under a short ttl")
	}
	// An approval error never carries the code.
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: "SECRET42"}); err == nil || strings.Contains(err.Error(), "SECRET42") {
		t.Fatalf("wrong-code error = %v", err)
	}
}
