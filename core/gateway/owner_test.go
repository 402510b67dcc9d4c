package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/store"
)

func TestOwnerCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body, code string
		ok         bool
	}{
		{"/owner ABCD2345", "ABCD2345", true},
		{"  /owner   abcd2345 ", "abcd2345", true},
		{"/owner@clawbot ABCD2345", "ABCD2345", true},
		{"/owner", "", false},
		{"/owner A B", "", false},
		{"/owners ABCD2345", "", false},
		{"owner ABCD2345", "", false},
	} {
		code, ok := ownerCode(c.body)
		if code != c.code && c.ok || ok != c.ok {
			t.Errorf("ownerCode(%q) = %q, %v; want %q, %v", c.body, code, ok, c.code, c.ok)
		}
	}
}

// A stranger's "/owner CODE" passes the access gate for exactly that
// command: a wrong code is refused without reaching the agent, the right
// one makes them an owner at once (they are answered, may use owner
// commands) and persisted for the next start; the code works once.
func TestOwnerClaim(t *testing.T) {
	dataDir := t.TempDir()
	code, err := ownerclaim.Create(dataDir, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{ownerClaims: ownerclaim.New(dataDir, nil)})
	e.post(dm("stranger", "/owner WRONG234"))
	got := e.text("chat-stranger")
	contains(t, got, "not valid")
	if strings.Contains(got, "echo") {
		t.Fatalf("the wrong claim reached the agent: %q", got)
	}
	// A second wrong code within the minute is not answered.
	e.post(dm("stranger", "/owner WRONG567"))
	e.quiet("chat-stranger", 300*time.Millisecond)

	e.post(dm("stranger", "/owner "+strings.ToLower(code)))
	contains(t, e.text("chat-stranger"), "You are the owner")
	if owners, err := ownerclaim.Owners(dataDir); err != nil || !slices.Equal(owners, []string{"lo:stranger"}) {
		t.Fatalf("persisted owners %q, %v", owners, err)
	}
	if !slices.Contains(e.gw.settings().Access.Owners, "lo:stranger") {
		t.Errorf("owners in force %q lack lo:stranger", e.gw.settings().Access.Owners)
	}
	// Admitted now, and an owner: /approve is theirs to use.
	e.post(dm("stranger", "hi agent"))
	contains(t, e.text("chat-stranger"), "echo: ", "hi agent")
	e.post(dm("stranger", "/approve NOSUCH1"))
	if got := e.text("chat-stranger"); strings.Contains(got, "Only an owner") {
		t.Errorf("the claimed owner is refused an owner command: %q", got)
	}
	// The code was used: another stranger gets the refusal.
	e.post(dm("other", "/owner "+code))
	contains(t, e.text("chat-other"), "not valid")

	rows, err := e.db.ListAudit(context.Background(), store.AuditFilter{Kind: store.AuditPairing}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var claimed, refused int
	for _, r := range rows {
		switch {
		case r.Decision == "owner claimed" && r.Subject == "lo:stranger":
			claimed++
		case r.Decision == "refused" && strings.HasPrefix(r.Detail, "/owner"):
			refused++
		}
	}
	if claimed != 1 || refused != 3 {
		t.Errorf("audit trail: %d claimed, %d refused; want 1 and 3: %+v", claimed, refused, rows)
	}
	if strings.Contains(e.logBuf.String(), code) {
		t.Errorf("the owner code is in the log")
	}
}
