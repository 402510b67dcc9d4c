package storetest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testLedger: RecordReply writes a turn's usage row in its transaction
// (none for a reply without usage, none when the reply is refused); the
// rows sum and list by time, agent, chat and sender, and survive a
// restart.
func testLedger(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.open()
	t0 := e.clk.Now()
	turn := func(i int, u *store.TurnUsage) int64 {
		t.Helper()
		id := mustStart(t, s, Msg(i), "k")
		if err := s.RecordReply(ctx, store.Reply{JournalID: id, Text: "r", Chunks: []string{"r"}, Usage: u}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	row := func(agent, chat, sender string, cost float64, in int64, at time.Duration) *store.TurnUsage {
		return &store.TurnUsage{At: t0.Add(at), Agent: agent, Instance: "tg", ChatID: chat, Sender: sender, Model: "opus",
			InputTokens: in, OutputTokens: in / 10, CacheReadTokens: 5, CacheCreationTokens: 1, CostUSD: cost, Duration: 2 * time.Second, Outcome: "ok"}
	}
	first := turn(1, row("main", "100", "tg:1", 0.25, 1000, 0))
	turn(2, row("main", "100", "tg:2", 0.5, 2000, time.Hour))
	cut := row("ops", "200", "tg:1", 1.0, 4000, 25*time.Hour)
	cut.Outcome, cut.Estimate = "aborted", true
	turn(3, cut)
	turn(4, nil) // a reply without usage (a command's answer)
	recordClaudeCosts(t, ctx, s)
	// A refused reply writes no row.
	if err := s.RecordReply(ctx, store.Reply{JournalID: first, Text: "again", Usage: row("main", "100", "tg:1", 9, 1, 0)}); err == nil {
		t.Fatal("a second reply to an entry was recorded")
	}

	s.Close()
	s = e.open()
	if x, err := s.Session(ctx, "k"); err != nil || x.ClaudeCostUSD != 0.84 || x.ClaudeCostOf != "c1" {
		t.Errorf("the session after replies with claude's running total: %+v, %v; want $0.84 of c1", x, err)
	}
	if _, err := s.Session(ctx, "gone"); err == nil {
		t.Error("a running total made a session")
	}
	sum := func(f store.UsageFilter) store.UsageSum {
		t.Helper()
		got, err := s.SumUsage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if all := sum(store.UsageFilter{}); all.Turns != 3 || !near(all.CostUSD, 1.75) || all.InputTokens != 7000 || all.OutputTokens != 700 || all.CacheReadTokens != 15 || all.CacheCreationTokens != 3 {
		t.Errorf("all: %+v", all)
	}
	if all := sum(store.UsageFilter{}); all.Estimates != 1 || !near(all.EstimatedUSD, 1.0) || !near(all.MaxUSD, 1.0) {
		t.Errorf("all: %+v, want the one estimate of $1.00 counted apart", all)
	}
	for _, c := range []struct {
		f     store.UsageFilter
		turns int
		cost  float64
	}{
		{store.UsageFilter{Sender: "tg:1"}, 2, 1.25},
		{store.UsageFilter{ChatID: "100"}, 2, 0.75},
		{store.UsageFilter{Agent: "ops"}, 1, 1.0},
		{store.UsageFilter{Since: t0.Add(time.Hour)}, 2, 1.5},
		{store.UsageFilter{Until: t0.Add(time.Hour)}, 1, 0.25},
		{store.UsageFilter{Since: t0, Until: t0.Add(24 * time.Hour), Sender: "tg:1"}, 1, 0.25},
		{store.UsageFilter{Sender: "tg:9"}, 0, 0},
	} {
		if got := sum(c.f); got.Turns != c.turns || !near(got.CostUSD, c.cost) {
			t.Errorf("%+v: %+v, want %d turns $%.2f", c.f, got, c.turns, c.cost)
		}
	}
	rows, err := s.ListUsage(ctx, store.UsageFilter{Instance: "tg"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Sender != "tg:1" || rows[2].Agent != "ops" || !rows[1].At.Equal(t0.Add(time.Hour)) ||
		rows[0].Duration != 2*time.Second || rows[0].Model != "opus" || rows[0].Outcome != "ok" ||
		rows[0].Estimate || !rows[2].Estimate {
		t.Fatalf("rows %+v", rows)
	}
	if two, _ := s.ListUsage(ctx, store.UsageFilter{}, 2); len(two) != 2 {
		t.Errorf("limit 2: %d rows", len(two))
	}
	for _, r := range rows {
		if !(store.UsageFilter{Sender: "tg:1"}).Matches(r) != (r.Sender != "tg:1") {
			t.Errorf("Matches disagrees with the store on %+v", r)
		}
	}
}

// recordClaudeCosts records replies carrying claude's running total: it goes
// to the session's row with the reply; not when the session moved to another
// claude session meanwhile (checked by the caller).
func recordClaudeCosts(t *testing.T, ctx context.Context, s store.Store) {
	t.Helper()
	if _, err := s.UpdateSession(ctx, "k", func(x *store.Session, _ bool) error { x.ClaudeSessionID = "c1"; return nil }); err != nil {
		t.Fatal(err)
	}
	for i, c := range []store.ClaudeCost{{Key: "k", Of: "c1", USD: 0.84}, {Key: "k", Of: "c0", USD: 9}, {Key: "gone", Of: "c1", USD: 9}} {
		id := mustStart(t, s, Msg(10+i), "k")
		if err := s.RecordReply(ctx, store.Reply{JournalID: id, Text: "r", ClaudeCost: &c}); err != nil {
			t.Fatal(err)
		}
	}
}
