package turn

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
)

// TestTurnCosts: each turn's ledger row holds that turn's own cost,
// whatever claude's result says — the session's running total
// (total_cost_usd) beside a per-turn figure (claude 2.1.330), the running
// total alone (the difference to the previous one, kept in the session
// row: across a restart of the host too), a turn cut before its result
// (its tokens at the model's price, an estimate), a session from before
// the host kept the total (an estimate, then exact). The replies are
// recorded in the store, claude's running total with them; a reply lost
// to a kill -9 leaves the total as it was, and the turn's run again is
// charged the difference: both runs' API calls.
func TestTurnCosts(t *testing.T) {
	t.Parallel()
	const opus = "claude-opus-5-5"
	// perTurn is a result as claude 2.1.330 writes it: 100k in, 1k out at
	// $0.42, the running total beside it.
	perTurn := func(total float64) runner.Result {
		return runner.Result{Text: "ok", Model: opus, Usage: runner.Usage{InputTokens: 100_000, OutputTokens: 1000, CostUSD: 0.42, PerTurnCost: true,
			SessionCostUSD: total, Models: map[string]runner.ModelUsage{opus: {InputTokens: 100_000, OutputTokens: 1000, CostUSD: 0.42}}}}
	}
	// totalOnly is a result with claude's running total and no per-turn
	// figure.
	totalOnly := func(total float64) runner.Result {
		return runner.Result{Text: "ok", Model: opus, Usage: runner.Usage{InputTokens: 100_000, OutputTokens: 1000, SessionCostUSD: total}}
	}
	// cut is a turn stopped before its result: the tokens its messages
	// showed, no cost.
	cut := runner.Result{Err: &runner.Error{Kind: runner.KindAborted}, Model: opus, UsageSeen: true,
		Usage: runner.Usage{InputTokens: 50_000, OutputTokens: 500}}
	restart := runner.Result{Text: "restart"} // not a turn: the host restarts here
	// lost is a turn whose reply a kill -9 lost, then the host's restart.
	lost := func(r runner.Result) runner.Result { r.Text = "lost"; return r }
	type want struct {
		usd      float64
		estimate bool
	}
	for _, c := range []struct {
		name string
		// before, when set, is the session stored before the first turn.
		before  *store.Session
		results []runner.Result
		want    []want
		total   float64 // claude's running total the session keeps at the end
		// tokens, when set, are the last row's input tokens.
		tokens int64
	}{
		{name: "2.1.330 warm, resumed after a restart", results: []runner.Result{perTurn(0.42), perTurn(0.84), restart, perTurn(1.26)},
			want: []want{{0.42, false}, {0.42, false}, {0.42, false}}, total: 1.26},
		{name: "running total only, warm and after a restart", results: []runner.Result{totalOnly(0.42), totalOnly(0.84), restart, totalOnly(1.26)},
			want: []want{{0.42, false}, {0.42, false}, {0.42, false}}, total: 1.26},
		{name: "a cut turn at the price the completed turn showed", results: []runner.Result{perTurn(0.42), cut, perTurn(0.84)},
			want: []want{{0.42, false}, {0.21, true}, {0.42, false}}, total: 0.84},
		{name: "a cut turn after a restart, at the built-in price", results: []runner.Result{restart, cut, totalOnly(0.42)},
			want: []want{{0.21, true}, {0.42, false}}, total: 0.42},
		{name: "a session from before the host kept the total", before: &store.Session{ClaudeSessionID: "c-old", Turns: 3},
			results: []runner.Result{totalOnly(1.68), totalOnly(2.10)}, want: []want{{0.42, true}, {0.42, false}}, total: 2.10},
		{name: "a compaction: no usage, the per-turn figure of its requests", results: []runner.Result{{Text: "ok", Model: "claude-haiku-4-5",
			Usage: runner.Usage{CostUSD: 0.21, PerTurnCost: true, SessionCostUSD: 0.21,
				Models: map[string]runner.ModelUsage{"claude-haiku-4-5": {InputTokens: 200_000, OutputTokens: 2000, CostUSD: 0.21}}}}},
			want: []want{{0.21, false}}, total: 0.21, tokens: 200_000},
		{name: "a kill -9 before the reply: the run again pays both", results: []runner.Result{totalOnly(0.42), lost(totalOnly(0.84)), restart, totalOnly(1.26)},
			want: []want{{0.42, false}, {0.84, false}}, total: 1.26},
		{name: "claude lost its running total", results: []runner.Result{totalOnly(0.42), totalOnly(0.84), totalOnly(0.42)},
			want: []want{{0.42, false}, {0.42, false}, {0.42, true}}, total: 0.42},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Settings{})
			ctx := context.Background()
			f.out.record = func(r Reply) {
				if r.Text == "lost" {
					return
				}
				if err := f.db.RecordReply(ctx, store.Reply{JournalID: r.ID, Text: r.Text, Usage: r.Usage, ClaudeCost: r.ClaudeCost, Session: r.Session.Take()}); err != nil {
					t.Error(err)
				}
			}
			if c.before != nil {
				if _, err := f.db.UpdateSession(ctx, testKey.String(), func(s *store.Session, _ bool) error {
					*s = *c.before
					s.SessionID, s.LastMessageAt = "old", f.now
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			var got []want
			var last *store.TurnUsage
			for _, res := range c.results {
				if res.Text == "restart" {
					f.turns = New(f.opts) // what the host kept in memory is gone
					continue
				}
				f.agent.result = res
				f.turns.Run(ctx, f.request("tg", "hi"))
				if res.Text == "lost" {
					continue
				}
				u := f.out.replies[len(f.out.replies)-1].Usage
				got = append(got, want{math.Round(u.CostUSD*1e6) / 1e6, u.Estimate})
				last = u
			}
			if c.tokens != 0 && last.InputTokens != c.tokens {
				t.Errorf("the last row's input tokens %d, want %d (the per-model figures)", last.InputTokens, c.tokens)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("ledger costs %v, want %v", got, c.want)
			}
			s, err := f.db.Session(ctx, testKey.String())
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(s.ClaudeCostUSD-c.total) > 1e-9 || s.ClaudeCostOf != s.ClaudeSessionID {
				t.Errorf("the session keeps claude's total $%v of %q (session %q), want $%v", s.ClaudeCostUSD, s.ClaudeCostOf, s.ClaudeSessionID, c.total)
			}
		})
	}
}
