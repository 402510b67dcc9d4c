package usage

import (
	"math"
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

// BuiltinPrices are the prices a cut turn is priced at when neither the
// configuration (price blocks) nor completed turns of the model gave
// one: what claude 2.1.330 charges, from its model catalog (cache writes
// at the 5-minute price, the one claude -p uses). claude-opus-5-5 (the
// default model) reads the cache at 0.05× its input price, not the list
// structure's 0.1×.
var BuiltinPrices = map[string]Price{
	"claude-opus-5-5":   {Input: 4, Output: 20, CacheRead: 0.2, CacheWrite: 5},
	"claude-sonnet-5-5": {Input: 2, Output: 10, CacheRead: 0.1, CacheWrite: 2.5},
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

// Complete is the operator's price for model with its unset (zero)
// kinds filled in: in the proportions of the model's built-in price to
// its input price (claude-opus-5-5 reads the cache at 0.05× input),
// Anthropic's list structure for a model without one.
func Complete(model string, set Price) Price {
	b := builtin(model)
	if _, ok := BuiltinPrices[model]; !ok {
		b = ListPrice(1)
	}
	f := set.Input / b.Input
	if set.Output == 0 {
		set.Output = f * b.Output
	}
	if set.CacheRead == 0 {
		set.CacheRead = f * b.CacheRead
	}
	if set.CacheWrite == 0 {
		set.CacheWrite = f * b.CacheWrite
	}
	return set
}

// builtin is the price of model before any turn of it completed.
func builtin(model string) Price {
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

// Prices prices the tokens of turns claude did not price (a turn cut
// before its result line): the operator's price for the model (price
// blocks) first, else the price its completed turns showed (Learn), else
// BuiltinPrices. Safe for concurrent use.
type Prices struct {
	configured map[string]Price
	mu         sync.Mutex
	// learned are the newest completed turns of each model, oldest first.
	learned map[string][]observed
}

// observed is a completed turn's share of one model: its tokens by kind
// in millions (Price's order) and what claude charged for them.
type observed struct {
	tok [4]float64
	usd float64
}

// maxObserved is how many completed turns of a model are kept to learn
// its price from: a few more than the four kinds, so turns that show the
// same mix of kinds do not push out one that showed another.
const maxObserved = 8

// NewPrices returns prices with the operator's table (nil: none).
func NewPrices(configured map[string]Price) *Prices {
	return &Prices{configured: configured, learned: map[string][]observed{}}
}

// SetConfigured replaces the operator's table (a reload).
func (p *Prices) SetConfigured(configured map[string]Price) {
	p.mu.Lock()
	p.configured = configured
	p.mu.Unlock()
}

// Learn keeps a completed turn's share of model, its tokens t and what
// claude charged for them, to learn each kind's price from (Price).
func (p *Prices) Learn(model string, t TurnTokens, usd float64) {
	if model == "" || usd <= 0 || t == (TurnTokens{}) || t.Input < 0 || t.Output < 0 || t.CacheRead < 0 || t.CacheCreation < 0 {
		return
	}
	o := observed{tok: [4]float64{float64(t.Input) / 1e6, float64(t.Output) / 1e6, float64(t.CacheRead) / 1e6, float64(t.CacheCreation) / 1e6}, usd: usd}
	p.mu.Lock()
	defer p.mu.Unlock()
	obs := append(p.learned[model], o)
	if len(obs) > maxObserved {
		obs = obs[len(obs)-maxObserved:]
	}
	p.learned[model] = obs
}

// Price is the price cut turns of model are charged at: the operator's,
// else the built-in price corrected by the model's completed turns.
func (p *Prices) Price(model string) Price {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr, ok := p.configured[model]; ok {
		return pr
	}
	return fit(builtin(model), p.learned[model])
}

// fit is the price nearest to prior (each kind's change relative to its
// prior price, least squares) that charges each observed turn what
// claude charged, newest first: a turn whose mix of kinds the newer ones
// already settle is passed over. Four turns with independent mixes fix
// every kind; one with input and output only leaves the cache prices at
// prior. Where the turns contradict each other so much that a kind would
// cost nothing or less, prior is scaled as a whole to the newest turn.
func fit(prior Price, obs []observed) Price {
	if len(obs) == 0 {
		return prior
	}
	s := [4]float64{prior.Input, prior.Output, prior.CacheRead, prior.CacheWrite}
	// In z, where a price is prior + s∘z, an observation asks c·z = r
	// with c = s∘tokens: the least z is in the span of the c's, built
	// orthonormal (Gram-Schmidt) with the r's carried along.
	var basis [][4]float64
	var rho []float64
	var z [4]float64
	for i := len(obs) - 1; i >= 0 && len(basis) < 4; i-- {
		o := obs[i]
		var c [4]float64
		r := o.usd
		for k := range c {
			c[k] = s[k] * o.tok[k]
			r -= s[k] * o.tok[k]
		}
		n0 := norm(c)
		for j, e := range basis {
			d := dot(c, e)
			for k := range c {
				c[k] -= d * e[k]
			}
			r -= d * rho[j]
		}
		n := norm(c)
		if n0 == 0 || n < 1e-6*n0 {
			continue // its mix is settled by newer turns
		}
		for k := range c {
			c[k] /= n
		}
		basis, rho = append(basis, c), append(rho, r/n)
		for k := range z {
			z[k] += r / n * c[k]
		}
	}
	v := [4]float64{}
	for k := range v {
		v[k] = s[k] * (1 + z[k])
		if !(v[k] > 0) {
			newest := obs[len(obs)-1]
			d := dot(s, newest.tok)
			if d <= 0 {
				return prior
			}
			f := newest.usd / d
			return Price{Input: f * s[0], Output: f * s[1], CacheRead: f * s[2], CacheWrite: f * s[3]}
		}
	}
	return Price{Input: v[0], Output: v[1], CacheRead: v[2], CacheWrite: v[3]}
}

func dot(a, b [4]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3] }

func norm(a [4]float64) float64 { return math.Sqrt(dot(a, a)) }

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
