package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// A stranger's "/owner CODE" passes the access gate for exactly that
// command: a wrong code is refused without reaching the agent, the right
// one makes them an owner at once (they are answered, may use owner
// commands) and persisted for the next start; the code works once. In
// process: the rule's table is core/admission's; this checks the gateway
// acts on its verdicts.
func TestOwnerClaim(t *testing.T) {
	dataDir := t.TempDir()
	code, err := ownerclaim.Create(dataDir, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &sdktest.Log{}
	g, ports, agent := inproc(t, func(s *Settings) {
		s.Access = access.Policy{DMPolicy: access.PolicyAllowlist, AllowFrom: []string{"tg:1"}}
	},
		func(o *Options) {
			o.OwnerClaims = ownerclaim.New(dataDir, nil)
			o.Logger = hclog.New(&hclog.LoggerOptions{Output: logBuf, Level: hclog.Debug})
		})
	ctx := context.Background()
	post := func(id, text string) {
		t.Helper()
		sendDM(t, ctx, g, id, text)
	}
	seen := 0
	post("5", "/owner WRONG234")
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "not valid") {
		t.Fatalf("a wrong code: %q", got)
	}
	// A second wrong code within the minute is not answered: the next
	// thing chat 5 is sent answers the right code.
	post("5", "/owner WRONG567")
	post("5", "/owner "+strings.ToLower(code))
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "You are the owner") {
		t.Fatalf("the right code: %q", got)
	}
	if owners, err := ownerclaim.Owners(dataDir); err != nil || !slices.Equal(owners, []string{"tg:5"}) {
		t.Fatalf("persisted owners %q, %v", owners, err)
	}
	if !slices.Contains(g.settings().Access.Owners, "tg:5") {
		t.Errorf("owners in force %q lack tg:5", g.settings().Access.Owners)
	}
	// Admitted now, and an owner: /approve is theirs to use.
	post("5", "hi agent")
	if got := ports.next(t, "5", &seen); !strings.HasPrefix(got, "re: ") || !strings.Contains(got, "hi agent") {
		t.Fatalf("the new owner's message: %q", got)
	}
	post("5", "/approve NOSUCH1")
	if got := ports.next(t, "5", &seen); strings.Contains(got, "Only an owner") {
		t.Errorf("the claimed owner is refused an owner command: %q", got)
	}
	// The code was used: another stranger gets the refusal.
	post("6", "/owner "+code)
	seen6 := 0
	if got := ports.next(t, "6", &seen6); !strings.Contains(got, "not valid") {
		t.Errorf("a used code: %q", got)
	}
	agent.mu.Lock()
	turns := len(agent.prompts)
	agent.mu.Unlock()
	if turns != 1 {
		t.Errorf("%d turns, want 1 (no /owner reached the agent)", turns)
	}
	rows, err := g.store.ListAudit(ctx, store.AuditFilter{Kind: store.AuditPairing}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var claimed, refused int
	for _, r := range rows {
		switch {
		case r.Decision == "owner claimed" && r.Subject == "tg:5":
			claimed++
		case r.Decision == "refused" && strings.HasPrefix(r.Detail, "/owner"):
			refused++
		}
	}
	if claimed != 1 || refused != 3 {
		t.Errorf("audit trail: %d claimed, %d refused; want 1 and 3: %+v", claimed, refused, rows)
	}
	if strings.Contains(logBuf.String(), code) {
		t.Errorf("the owner code is in the log")
	}
}
