// Package migrationtest holds what the engines' migration tests share:
// each takes a database back to an older schema with its own SQL, writes
// what that schema held, reopens the store (which migrates) and checks the
// result through the store contract with the helpers here, the same
// expectations for every engine.
package migrationtest

import (
	"context"
	"math"
	"testing"

	"github.com/clawhost/clawhost/core/store"
)

// The session keys of the agent-keys migration: OldKey as a database made
// before session keys carried the agent stored it, AgentKey after.
const (
	OldKey   = "tg:direct:5"
	AgentKey = "agent:main:" + OldKey
)

// SeedAgentKeys stores, under OldKey, a session with claude session c-1
// and one queued entry: what the agent-keys migration must move.
func SeedAgentKeys(t testing.TB, s store.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.UpdateSession(ctx, OldKey, func(x *store.Session, _ bool) error {
		x.ClaudeSessionID = "c-1"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Accept(ctx, store.Inbound{Instance: "tg", ChatID: "5", MessageID: "1", Message: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(ctx, res.ID, OldKey); err != nil {
		t.Fatal(err)
	}
}

// CheckAgentKeys checks, after the agent-keys migration, that what
// SeedAgentKeys stored is the default agent's (under AgentKey) with
// everything it held, and nothing is left under OldKey.
func CheckAgentKeys(t testing.TB, s store.Store) {
	t.Helper()
	ctx := context.Background()
	if x, err := s.Session(ctx, AgentKey); err != nil || x.ClaudeSessionID != "c-1" {
		t.Fatalf("the session under %q after the migration: %+v, %v", AgentKey, x, err)
	}
	if _, err := s.Session(ctx, OldKey); err == nil {
		t.Errorf("a session is still under the old key %q", OldKey)
	}
	if n, err := s.CountPending(ctx, AgentKey); err != nil || n != 1 {
		t.Fatalf("queued entries of %q after the migration: %d, %v", AgentKey, n, err)
	}
	if p, err := s.PendingCounts(ctx); err != nil || len(p) != 1 || p[AgentKey] != 1 {
		t.Fatalf("pending counts after the migration: %v, %v", p, err)
	}
}

// TurnCostRow is a ledger row of the turn-costs migration: chat, the
// cost_usd stored before (claude's running total; 0 for a cut turn), the
// outcome, and the turn's own cost the migration must make of it.
type TurnCostRow struct {
	Chat    string
	Total   float64
	Outcome string
	Want    float64
}

// TurnCostRows are the rows an engine writes before the turn-costs
// migration, row i as journal_id i+1 at i minutes, agent main, instance
// tg, sender tg:1, model opus, 100,000 input and 1,000 output tokens:
// chat 1, a session's turns 0.42, 0.84, a cut turn, 1.26; a /new, then
// 0.42 again. Chat 2, interleaved: its own 0.30, 0.60. The cut turn is
// priced for an unknown "opus" at $15/M input: $1.575.
var TurnCostRows = []TurnCostRow{{"1", 0.42, "ok", 0.42}, {"2", 0.30, "ok", 0.30}, {"1", 0.84, "ok", 0.42}, {"1", 0, "aborted", 1.575},
	{"2", 0.60, "ok", 0.30}, {"1", 1.26, "ok", 0.42}, {"1", 0.42, "ok", 0.42}}

// CheckTurnCosts checks the ledger after the turn-costs migration: each
// of TurnCostRows with its own cost and marked an estimate, and the sum.
func CheckTurnCosts(t testing.TB, s store.Store) {
	t.Helper()
	ctx := context.Background()
	got, err := s.ListUsage(ctx, store.UsageFilter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(TurnCostRows) {
		t.Fatalf("%d rows after the migration, want %d", len(got), len(TurnCostRows))
	}
	for i, r := range TurnCostRows {
		if math.Abs(got[i].CostUSD-r.Want) > 1e-9 || got[i].ChatID != r.Chat || !got[i].Estimate {
			t.Errorf("row %d: %+v, want chat %s $%.2f marked an estimate", i, got[i], r.Chat, r.Want)
		}
	}
	if sum, err := s.SumUsage(ctx, store.UsageFilter{}); err != nil || sum.Estimates != len(TurnCostRows) || math.Abs(sum.CostUSD-3.855) > 1e-9 {
		t.Errorf("sum after the migration: %+v, %v; want $3.855, all estimates", sum, err)
	}
}
