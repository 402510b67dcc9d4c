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

// cli is what claude 2.1.330 charges for claude-opus-5-5, from its model
// catalog: the price the tests' completed turns are charged at.
var cli = Price{Input: 4, Output: 20, CacheRead: 0.2, CacheWrite: 5}

// stopped is the stopped turn of issue 80: 50k in, 2k out, 400k read from
// the prompt cache, 20k written to it — $0.42 at claude's prices.
var stopped = TurnTokens{Input: 50_000, Output: 2000, CacheRead: 400_000, CacheCreation: 20_000}

// TestStoppedTurnWithCache: a stopped turn that read and wrote the prompt
// cache costs what claude would have charged, to the cent: on a fresh
// host (built-in prices), after completed turns of the model (each
// token kind learned, not one folded rate), and for a model the host has
// no price for once its completed turns showed every kind.
func TestStoppedTurnWithCache(t *testing.T) {
	t.Parallel()
	if got := cli.Of(stopped); math.Abs(got-0.42) > 1e-9 {
		t.Fatalf("the stopped turn at claude's prices: $%v, want $0.42", got)
	}
	turn := func(in, out, read, write int64) ModelCost {
		tok := TurnTokens{Input: in, Output: out, CacheRead: read, CacheCreation: write}
		return ModelCost{Tokens: tok, USD: cli.Of(tok)}
	}
	mixes := []ModelCost{turn(4426, 2, 0, 0), turn(120, 310, 9000, 4400), turn(35, 900, 52_000, 800), turn(2000, 40, 61_000, 300)}
	for _, c := range []struct {
		name, model string
		completed   []ModelCost
	}{
		{"fresh host", "claude-opus-5-5", nil},
		{"after one completed turn", "claude-opus-5-5", []ModelCost{turn(30_000, 1200, 250_000, 9000)}},
		{"after turns without cache", "claude-opus-5-5", []ModelCost{mixes[0], mixes[0], turn(900, 50, 0, 0)}},
		{"after many turns", "claude-opus-5-5", append(append([]ModelCost{}, mixes...), mixes...)},
		{"an unknown model, learned", "claude-opus-9-9", mixes},
		{"an unknown model, same mix again", "claude-opus-9-9", append(append([]ModelCost{}, mixes...), mixes[3], mixes[3], mixes[3])},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := NewPrices(nil)
			for _, m := range c.completed {
				TurnCost(Reported{Result: true, PerTurn: true, TurnUSD: m.USD, Models: map[string]ModelCost{c.model: m}, Model: c.model, Tokens: m.Tokens}, Prior{}, p)
			}
			got := TurnCost(Reported{Model: c.model, Tokens: stopped}, Prior{}, p)
			if !got.Estimate || math.Abs(got.USD-0.42) > 0.005 {
				t.Errorf("the stopped turn cost $%.4f (estimate %v), want $0.42", got.USD, got.Estimate)
			}
			if pr := p.Price(c.model); math.Abs(pr.CacheRead-0.2) > 1e-6 {
				t.Errorf("cache reads at $%v/M, want $0.2/M: %+v", pr.CacheRead, pr)
			}
		})
	}
}

// TestFit: each kind moves only as far as completed turns show it; turns
// at odds with each other never make a kind free or negative.
func TestFit(t *testing.T) {
	t.Parallel()
	obs := func(tok TurnTokens, usd float64) observed {
		return observed{tok: [4]float64{float64(tok.Input) / 1e6, float64(tok.Output) / 1e6, float64(tok.CacheRead) / 1e6, float64(tok.CacheCreation) / 1e6}, usd: usd}
	}
	prior := ListPrice(15)
	for _, c := range []struct {
		name string
		obs  []observed
		want func(Price) bool
	}{
		{"none", nil, func(p Price) bool { return p == prior }},
		{"input only: the rest stays", []observed{obs(TurnTokens{Input: 1e6}, 4)}, func(p Price) bool {
			return math.Abs(p.Input-4) < 1e-9 && p.Output == prior.Output && p.CacheRead == prior.CacheRead && p.CacheWrite == prior.CacheWrite
		}},
		{"at odds", []observed{obs(TurnTokens{Input: 1e6, Output: 1e6}, 100), obs(TurnTokens{Input: 1e6}, 0.01), obs(TurnTokens{Input: 2e6, Output: 1e6}, 0.02)},
			func(p Price) bool { return p.Input > 0 && p.Output > 0 && p.CacheRead > 0 && p.CacheWrite > 0 }},
	} {
		if got := fit(prior, c.obs); !c.want(got) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

// TestComplete: an operator's price block fills its unset kinds in the
// proportions claude charges the model at, else the list structure; what
// it sets stays.
func TestComplete(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model string
		set   Price
		want  Price
	}{
		{"claude-opus-5-5", Price{Input: 4}, cli},
		{"claude-opus-5-5", Price{Input: 8, CacheRead: 1}, Price{Input: 8, Output: 40, CacheRead: 1, CacheWrite: 10}},
		{"custom", Price{Input: 2, Output: 8}, Price{Input: 2, Output: 8, CacheRead: 0.2, CacheWrite: 2.5}},
		{"claude-opus-9-9", Price{Input: 10}, ListPrice(10)},
	} {
		if got := Complete(c.model, c.set); math.Abs(got.Input-c.want.Input)+math.Abs(got.Output-c.want.Output)+
			math.Abs(got.CacheRead-c.want.CacheRead)+math.Abs(got.CacheWrite-c.want.CacheWrite) > 1e-9 {
			t.Errorf("%s %+v: %+v, want %+v", c.model, c.set, got, c.want)
		}
	}
}
