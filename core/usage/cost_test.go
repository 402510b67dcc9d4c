package usage

import (
	"math"
	"testing"
)

// TestPrices: a cut turn's tokens are priced at the operator's price for
// the model, else the price its last completed turn showed, else the
// built-in list price, else its family's, else opus's.
func TestPrices(t *testing.T) {
	t.Parallel()
	p := NewPrices(map[string]Price{"set": ListPrice(2)})
	p.Learn("claude-opus-5-5", TurnTokens{Input: 100_000, Output: 1000}, 0.84) // twice the built-in
	p.Learn("set", TurnTokens{Input: 100_000, Output: 1000}, 9)                // the operator's wins
	tok := TurnTokens{Input: 100_000, Output: 1000}
	for _, c := range []struct {
		model string
		usd   float64
	}{
		{"set", 0.21},
		{"claude-opus-5-5", 0.84},
		{"claude-haiku-4-5", 0.105},
		{"claude-sonnet-9", 0.315},
		{"something-new", 1.575},
	} {
		if got := p.Price(c.model).Of(tok); math.Abs(got-c.usd) > 1e-9 {
			t.Errorf("%s: $%v, want $%v", c.model, got, c.usd)
		}
	}
	if got := ListPrice(4).Of(TurnTokens{CacheRead: 1e6, CacheCreation: 1e6}); math.Abs(got-(0.4+5)) > 1e-9 {
		t.Errorf("cache tokens at $4/M input: $%v, want $5.40", got)
	}
}

// TestTurnCost: the per-turn figure first, else the difference of running
// totals, else the tokens priced (an estimate); a cut turn's tokens
// priced, claude's running total kept.
func TestTurnCost(t *testing.T) {
	t.Parallel()
	tok := TurnTokens{Input: 100_000, Output: 1000}
	for _, c := range []struct {
		name  string
		r     Reported
		prior Prior
		want  Cost
	}{
		{"per turn", Reported{Result: true, PerTurn: true, TurnUSD: 0.42, SessionUSD: 0.84, Model: "claude-opus-5-5", Tokens: tok}, Prior{USD: 0.42, Known: true},
			Cost{USD: 0.42, Total: 0.84}},
		{"difference", Reported{Result: true, SessionUSD: 1.26, Model: "claude-opus-5-5", Tokens: tok}, Prior{USD: 0.84, Known: true}, Cost{USD: 0.42, Total: 1.26}},
		{"no prior", Reported{Result: true, SessionUSD: 1.26, Model: "claude-opus-5-5", Tokens: tok}, Prior{}, Cost{USD: 0.42, Estimate: true, Total: 1.26}},
		{"total went down", Reported{Result: true, SessionUSD: 0.42, Model: "claude-opus-5-5", Tokens: tok}, Prior{USD: 0.84, Known: true},
			Cost{USD: 0.42, Estimate: true, Total: 0.42}},
		{"total stayed, tokens spent", Reported{Result: true, SessionUSD: 0.84, Model: "claude-opus-5-5", Tokens: tok}, Prior{USD: 0.84, Known: true},
			Cost{USD: 0.42, Estimate: true, Total: 0.84}},
		{"total stayed, nothing spent", Reported{Result: true, SessionUSD: 0.84, Model: "claude-opus-5-5"}, Prior{USD: 0.84, Known: true},
			Cost{Total: 0.84}},
		{"cut", Reported{Model: "claude-opus-5-5", Tokens: TurnTokens{Input: 50_000}}, Prior{USD: 0.84, Known: true}, Cost{USD: 0.2, Estimate: true, Total: 0.84}},
		{"cut before any token", Reported{Model: "claude-opus-5-5"}, Prior{USD: 0.84, Known: true}, Cost{Total: 0.84}},
	} {
		got := TurnCost(c.r, c.prior, NewPrices(nil))
		got.USD = math.Round(got.USD*1e9) / 1e9
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
