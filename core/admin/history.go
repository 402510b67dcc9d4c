package admin

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The operator's page's usage over time: GET /usage/daily.json and
// /usage/daily.csv sum the ledger (Reports.Usage) per day and per person,
// chat or agent over a period, with the budgets that apply.
//
// Query: by=person|chat|agent (default person), days=1..90 (default 30),
// and filters person=, chat=, agent= (exact keys as the chart names them).

// Budget is one budget as the page draws it: a line at LimitUSD on the
// charts of its scope.
type Budget struct {
	// Scope is what it caps: "person" and "chat" a day, "agent" a
	// calendar month.
	Scope string `json:"scope"`
	// Agent is the agent whose block sets it; "" the top-level budget
	// (every agent's turns count).
	Agent    string  `json:"agent,omitempty"`
	LimitUSD float64 `json:"limit_usd"`
	// WarnAt is the fraction at which a chat is warned (0.8).
	WarnAt float64 `json:"warn_at"`
	// Exempt are the senders it never holds (the owners, unless
	// budget.owners): a person's budget lists none of them as near it.
	Exempt []string `json:"exempt,omitempty"`
}

// Period says how long the budget's period is: "day" or "month".
func (b Budget) Period() string {
	if b.Scope == "agent" {
		return "month"
	}
	return "day"
}

// Daily is the body of GET /usage/daily.json.
type Daily struct {
	// By is the grouping: "person", "chat" or "agent".
	By string `json:"by"`
	// Days are the days of the period, oldest first ("2026-11-25").
	Days []string `json:"days"`
	// Series are the groups, the costliest first; each has one value per
	// day.
	Series []Series `json:"series"`
	// Budgets are the budgets of the grouping's scope.
	Budgets []Budget `json:"budgets,omitempty"`
	// Near are those at or over a budget's warn_at in its current period
	// (today, this month), whatever the grouping.
	Near []NearBudget `json:"near,omitempty"`
	// Keys are every person, chat and agent of the period, for the
	// page's filters.
	Keys map[string][]string `json:"keys"`
}

// Series is one person's, chat's or agent's cost and turns per day.
type Series struct {
	Key     string    `json:"key"`
	CostUSD []float64 `json:"cost_usd"`
	Turns   []int     `json:"turns"`
}

// NearBudget is someone at or past a budget's warning line.
type NearBudget struct {
	Scope    string  `json:"scope"`
	Key      string  `json:"key"`
	Agent    string  `json:"agent,omitempty"`
	SpentUSD float64 `json:"spent_usd"`
	LimitUSD float64 `json:"limit_usd"`
	// Over: the budget is spent; no turn of theirs starts.
	Over bool `json:"over"`
}

// maxDays bounds the period of the usage charts.
const maxDays = 90

// dailyQuery is a parsed usage query.
type dailyQuery struct {
	by                  string
	days                int
	person, chat, agent string
}

func parseDaily(r *http.Request) (dailyQuery, error) {
	q := r.URL.Query()
	d := dailyQuery{by: q.Get("by"), days: 30, person: q.Get("person"), chat: q.Get("chat"), agent: q.Get("agent")}
	if d.by == "" {
		d.by = "person"
	}
	if d.by != "person" && d.by != "chat" && d.by != "agent" {
		return d, fmt.Errorf("by is person, chat or agent, not %q", d.by)
	}
	if s := q.Get("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxDays {
			return d, fmt.Errorf("days is a number from 1 to %d, not %q", maxDays, s)
		}
		d.days = n
	}
	return d, nil
}

// keyOf is the row's key in a grouping.
func keyOf(u UsageRecord, by string) string {
	switch by {
	case "chat":
		return u.Instance + ":" + u.ChatID
	case "agent":
		return u.Agent
	}
	return u.Sender
}

// daily sums rows (the ledger since the period's first day) for q, the
// period ending today by now in loc.
func daily(rows []UsageRecord, q dailyQuery, budgets []Budget, now time.Time, loc *time.Location) Daily {
	today := dayStart(now, loc)
	first := today.AddDate(0, 0, -(q.days - 1))
	out := Daily{By: q.by, Series: []Series{}, Keys: map[string][]string{}}
	index := map[string]int{}
	for d := first; !d.After(today); d = d.AddDate(0, 0, 1) {
		index[d.Format(time.DateOnly)] = len(out.Days)
		out.Days = append(out.Days, d.Format(time.DateOnly))
	}
	seen := map[string]bool{}
	series := map[string]*Series{}
	var order []string
	for _, u := range rows {
		day, ok := index[u.At.In(loc).Format(time.DateOnly)]
		if !ok {
			continue
		}
		for _, by := range []string{"person", "chat", "agent"} {
			if k := keyOf(u, by); !seen[by+"\x00"+k] {
				seen[by+"\x00"+k] = true
				out.Keys[by] = append(out.Keys[by], k)
			}
		}
		if (q.person != "" && u.Sender != q.person) || (q.chat != "" && keyOf(u, "chat") != q.chat) || (q.agent != "" && u.Agent != q.agent) {
			continue
		}
		k := keyOf(u, q.by)
		s := series[k]
		if s == nil {
			s = &Series{Key: k, CostUSD: make([]float64, len(out.Days)), Turns: make([]int, len(out.Days))}
			series[k] = s
			order = append(order, k)
		}
		s.CostUSD[day] += u.CostUSD
		s.Turns[day]++
	}
	for _, k := range order {
		out.Series = append(out.Series, *series[k])
	}
	slices.SortStableFunc(out.Series, func(a, b Series) int {
		if ca, cb := sum(a.CostUSD), sum(b.CostUSD); ca != cb {
			if ca > cb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	for _, ks := range out.Keys {
		slices.Sort(ks)
	}
	for _, b := range budgets {
		if b.Scope == q.by {
			out.Budgets = append(out.Budgets, b)
		}
	}
	out.Near = nearBudgets(rows, budgets, today, loc)
	return out
}

// nearBudgets lists who is at or past a budget's warn_at in its period:
// today for a person's and a chat's, this calendar month for an agent's.
func nearBudgets(rows []UsageRecord, budgets []Budget, today time.Time, loc *time.Location) []NearBudget {
	month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc)
	var out []NearBudget
	for _, b := range budgets {
		if b.LimitUSD <= 0 {
			continue
		}
		from := today
		if b.Period() == "month" {
			from = month
		}
		spent := map[string]float64{}
		var keys []string
		for _, u := range rows {
			if u.At.Before(from) || (b.Agent != "" && u.Agent != b.Agent) {
				continue
			}
			k := keyOf(u, b.Scope)
			if _, ok := spent[k]; !ok {
				keys = append(keys, k)
			}
			spent[k] += u.CostUSD
		}
		for _, k := range keys {
			if b.Scope == "person" && slices.Contains(b.Exempt, k) {
				continue
			}
			if s := spent[k]; s >= b.LimitUSD*b.WarnAt {
				out = append(out, NearBudget{Scope: b.Scope, Key: k, Agent: b.Agent, SpentUSD: s, LimitUSD: b.LimitUSD, Over: s >= b.LimitUSD})
			}
		}
	}
	return out
}

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

// dayStart is the start of t's day in loc.
func dayStart(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// usageDaily serves GET /usage/daily.json and /usage/daily.csv.
func (h *handler) usageDaily(w http.ResponseWriter, r *http.Request) {
	asCSV := strings.HasSuffix(r.URL.Path, ".csv")
	q, err := parseDaily(r)
	switch {
	case h.reports == nil:
		writeJSON(w, http.StatusNotFound, errorBody{"usage is not available"})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	now := h.now()
	// From the start of the month too: an agent's budget counts it.
	from := dayStart(now, h.loc).AddDate(0, 0, -(q.days - 1))
	if m := time.Date(now.In(h.loc).Year(), now.In(h.loc).Month(), 1, 0, 0, 0, 0, h.loc); m.Before(from) {
		from = m
	}
	rows, err := h.reports.Usage(r.Context(), from)
	if err != nil {
		h.log.Error("read the usage ledger", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{"reading the usage ledger failed"})
		return
	}
	var budgets []Budget
	if h.budgets != nil {
		budgets = h.budgets()
	}
	d := daily(rows, q, budgets, now, h.loc)
	if !asCSV {
		writeJSON(w, http.StatusOK, d)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="clawhost-usage-by-%s-%s.csv"`, q.by, d.Days[len(d.Days)-1]))
	writeDailyCSV(w, d)
}

// writeDailyCSV writes one line per day and group with turns: day, the
// grouping's key, turns, cost in US dollars (full precision).
func writeDailyCSV(w http.ResponseWriter, d Daily) {
	c := csv.NewWriter(w)
	_ = c.Write([]string{"day", d.By, "turns", "cost_usd"})
	for i, day := range d.Days {
		for _, s := range d.Series {
			if s.Turns[i] == 0 {
				continue
			}
			_ = c.Write([]string{day, s.Key, strconv.Itoa(s.Turns[i]), strconv.FormatFloat(s.CostUSD[i], 'f', -1, 64)})
		}
	}
	c.Flush()
}
