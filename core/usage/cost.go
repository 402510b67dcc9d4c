package usage

import (
	"strings"
	"sync"
)

// TurnTokens are a turn's tokens by kind.
type TurnTokens struct {
	Input, Output, CacheRead, CacheCreation int64
}

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Of is what t costs at p.
func (p Price) Of(t TurnTokens) float64 {
	return (float64(t.Input)*p.Input + float64(t.Output)*p.Output + float64(t.CacheRead)*p.CacheRead +
		float64(t.CacheCreation)*p.CacheWrite) / 1e6
}

// ListPrice is a price in Anthropic's list structure from its input
// price: output 5×, cache reads 0.1×, cache writes (5 minutes) 1.25×.
func ListPrice(input float64) Price {
	return Price{Input: input, Output: 5 * input, CacheRead: input / 10, CacheWrite: 1.25 * input}
}

// weight is t in input tokens of the list structure (ListPrice).
func weight(t TurnTokens) float64 {
	return float64(t.Input) + 5*float64(t.Output) + float64(t.CacheRead)/10 + 1.25*float64(t.CacheCreation)
}

// BuiltinPrices are the list prices a cut turn is priced at when neither
// the configuration (price blocks) nor a completed turn of the model
// gave one. claude-opus-5-5 and claude-haiku-4-5 are what claude 2.1.330
// charged for them (core/runner's doc); the others are Anthropic's list
// prices.
var BuiltinPrices = map[string]Price{
	"claude-opus-5-5":   ListPrice(4),
	"claude-opus-4-5":   ListPrice(5),
	"claude-opus-4-1":   ListPrice(15),
	"claude-sonnet-4-5": ListPrice(3),
	"claude-sonnet-4":   ListPrice(3),
	"claude-haiku-4-5":  ListPrice(1),
}

// builtinFamilies price a model not in BuiltinPrices by the family its
// name says; any other model at the costliest family's price (a budget
// would rather stop early than late).
var builtinFamilies = []struct {
	name  string
	price Price
}{{"haiku", ListPrice(1)}, {"sonnet", ListPrice(3)}, {"opus", ListPrice(15)}}

// Prices prices the tokens of turns claude did not price (a turn cut
// before its result line): the operator's price for the model (price
// blocks) first, else the price the model's last completed turn showed
// (Learn), else BuiltinPrices. Safe for concurrent use.
type Prices struct {
	configured map[string]Price
	mu         sync.Mutex
	learned    map[string]Price
}

// NewPrices returns prices with the operator's table (nil: none).
func NewPrices(configured map[string]Price) *Prices {
	return &Prices{configured: configured, learned: map[string]Price{}}
}

// SetConfigured replaces the operator's table (a reload).
func (p *Prices) SetConfigured(configured map[string]Price) {
	p.mu.Lock()
	p.configured = configured
	p.mu.Unlock()
}

// Learn takes the price of model from a completed turn's share of it:
// its cost over its tokens weighted as in ListPrice gives the input
// price (claude prices by that structure).
func (p *Prices) Learn(model string, t TurnTokens, usd float64) {
	w := weight(t)
	if model == "" || w <= 0 || usd <= 0 {
		return
	}
	p.mu.Lock()
	p.learned[model] = ListPrice(usd / w * 1e6)
	p.mu.Unlock()
}

// Price is the price cut turns of model are charged at.
func (p *Prices) Price(model string) Price {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr, ok := p.configured[model]; ok {
		return pr
	}
	if pr, ok := p.learned[model]; ok {
		return pr
	}
	if pr, ok := BuiltinPrices[model]; ok {
		return pr
	}
	for _, f := range builtinFamilies {
		if strings.Contains(model, f.name) {
			return f.price
		}
	}
	return builtinFamilies[len(builtinFamilies)-1].price
}

// Reported is what claude said about a turn's cost (core/runner's
// Result.Usage, mapped by the caller).
type Reported struct {
	// Result: claude wrote a result line. False: the turn was cut
	// (/stop, timeout, crash) and Tokens are what its messages showed.
	Result bool
	// PerTurn: TurnUSD is claude's own figure for the turn
	// (model_usage_since_last_result); Models its share per model.
	PerTurn bool
	TurnUSD float64
	Models  map[string]ModelCost
	// SessionUSD is claude's total_cost_usd: the claude session's running
	// total.
	SessionUSD float64
	Model      string
	Tokens     TurnTokens
}

// ModelCost is one model's share of a turn.
type ModelCost struct {
	Tokens TurnTokens
	USD    float64
}

// Prior is claude's running total of the claude session as of the turn
// before (store.Session.ClaudeCostUSD); Known false when there is none to
// trust (a session from before the host kept it).
type Prior struct {
	USD   float64
	Known bool
}

// Cost is a turn's own cost: USD, whether it is an estimate, and the
// running total to keep for the next turn.
type Cost struct {
	USD      float64
	Estimate bool
	Total    float64
}

// TurnCost derives a turn's own cost from what claude reported:
//   - claude's per-turn figure when its result has one (claude 2.1.330);
//   - else the difference of its running total to the prior one, when
//     that is known and smaller (when not, the tokens are priced instead,
//     an estimate: claude restarted its count, or did not keep the cost
//     of a run whose reply the host lost);
//   - a cut turn's tokens at p's price for the model (an estimate; the
//     tokens are a floor), the running total left as it was.
//
// A completed turn's prices per model are learned by p.
func TurnCost(r Reported, prior Prior, p *Prices) Cost {
	switch {
	case !r.Result:
		return Cost{USD: p.Price(r.Model).Of(r.Tokens), Estimate: r.Tokens != TurnTokens{}, Total: prior.USD}
	case r.PerTurn:
		for name, m := range r.Models {
			p.Learn(name, m.Tokens, m.USD)
		}
		return Cost{USD: r.TurnUSD, Total: r.SessionUSD}
	case prior.Known && (r.SessionUSD > prior.USD || r.SessionUSD == prior.USD && r.Tokens == TurnTokens{}):
		// Not when the total stayed while tokens were spent: a run the
		// host lost (a crash before its reply) moved the kept total, and
		// claude's did not keep it.
		usd := r.SessionUSD - prior.USD
		p.Learn(r.Model, r.Tokens, usd)
		return Cost{USD: usd, Total: r.SessionUSD}
	}
	return Cost{USD: p.Price(r.Model).Of(r.Tokens), Estimate: true, Total: r.SessionUSD}
}
