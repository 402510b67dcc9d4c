package ownerclaim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pending reports whether dir holds a claim that is not expired.
func pending(dir string, now time.Time) bool {
	var cl claim
	if err := readJSON(filepath.Join(dir, ClaimFile), &cl); err != nil {
		return false
	}
	return now.Before(cl.ExpiresAt) && cl.Attempts < MaxAttempts
}

// created makes a claim valid for an hour in a fresh dir at start; it
// returns the dir, the clock and the code.
func created(t *testing.T) (string, *tstimetest.Fake, string) {
	t.Helper()
	dir := t.TempDir()
	clock := tstimetest.NewFake(start)
	code, err := Create(dir, time.Hour, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return dir, clock, code
}

func TestClaimMakesOwnerOnce(t *testing.T) {
	t.Parallel()
	dir, clock, code := created(t)
	if len(code) != CodeLength || strings.Trim(code, alphabet) != "" {
		t.Fatalf("code %q: want %d letters of the alphabet", code, CodeLength)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ClaimFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), code) {
		t.Errorf("the claim file holds the code itself: %s", raw)
	}
	fi, _ := os.Stat(filepath.Join(dir, ClaimFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("claim file mode %v, want 0600", fi.Mode().Perm())
	}
	if !pending(dir, clock.Now()) {
		t.Fatal("a fresh claim is not pending")
	}
	c := New(dir, clock.Now)
	if got, err := c.Claim("tg:1", "WRONGCOD"); err != nil || got != WrongCode {
		t.Fatalf("wrong code: %v, %v; want WrongCode", got, err)
	}
	// Case and spaces do not matter.
	if got, err := c.Claim("tg:42", " "+strings.ToLower(code)+" "); err != nil || got != Claimed {
		t.Fatalf("right code: %v, %v; want Claimed", got, err)
	}
	owners, err := Owners(dir)
	if err != nil || !slices.Equal(owners, []string{"tg:42"}) {
		t.Fatalf("owners %q, %v; want [tg:42]", owners, err)
	}
	fi, _ = os.Stat(filepath.Join(dir, OwnersFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("owners file mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, ClaimFile)); !os.IsNotExist(err) {
		t.Errorf("claim file still there after the claim: %v", err)
	}
	if got, _ := c.Claim("tg:7", code); got != NoClaim {
		t.Errorf("second use of the code: %v, want NoClaim", got)
	}
	if owners, _ := Owners(dir); !slices.Equal(owners, []string{"tg:42"}) {
		t.Errorf("owners after a reuse: %q", owners)
	}
}

func TestClaimExpires(t *testing.T) {
	t.Parallel()
	dir, clock, code := created(t)
	clock.Advance(time.Hour)
	if pending(dir, clock.Now()) {
		t.Error("pending at its expiry")
	}
	if got, err := New(dir, clock.Now).Claim("tg:1", code); err != nil || got != NoClaim {
		t.Fatalf("expired claim: %v, %v; want NoClaim", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ClaimFile)); !os.IsNotExist(err) {
		t.Errorf("expired claim file kept: %v", err)
	}
	if owners, _ := Owners(dir); len(owners) != 0 {
		t.Errorf("owners %q after an expired claim", owners)
	}
}

func TestWrongCodesBurnTheClaim(t *testing.T) {
	t.Parallel()
	dir, clock, code := created(t)
	c := New(dir, clock.Now)
	for i := range MaxAttempts {
		if got, err := c.Claim("tg:666", "AAAAAAAA"); err != nil || got != WrongCode {
			t.Fatalf("attempt %d: %v, %v; want WrongCode", i+1, got, err)
		}
	}
	if got, _ := c.Claim("tg:1", code); got != NoClaim {
		t.Errorf("the right code after %d wrong ones: %v, want NoClaim (burned)", MaxAttempts, got)
	}
}

func TestOwnersMissingAndBroken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if owners, err := Owners(dir); err != nil || owners != nil {
		t.Errorf("no file: %q, %v", owners, err)
	}
	if err := os.WriteFile(filepath.Join(dir, OwnersFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Owners(dir); err == nil {
		t.Error("a broken owners file read without an error")
	}
}
