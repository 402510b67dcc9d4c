// Package usage turns usage ledger rows (store.TurnUsage) into the
// reports people read: sums per person, chat, agent or day over a window,
// for /usage, the status page and `clawhost usage`.
package usage

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Groupings of a report (clawhost usage -by).
const (
	ByPerson = "person"
	ByChat   = "chat"
	ByAgent  = "agent"
	ByDay    = "day"
)

// Bys are the groupings, for usage messages.
var Bys = []string{ByPerson, ByChat, ByAgent, ByDay}

// Row is one group's sum.
type Row struct {
	// Key is the person ("tg:5", "schedule:daily", "heartbeat"), the chat
	// ("tg:-100"), the agent, or the day ("2026-11-25").
	Key string `json:"key"`
	store.UsageSum
}

// Group sums rows by the grouping (days in loc; nil: local time), the
// most expensive first (days oldest first).
func Group(rows []store.TurnUsage, by string, loc *time.Location) []Row {
	if loc == nil {
		loc = time.Local
	}
	idx := map[string]int{}
	var out []Row
	for _, u := range rows {
		var k string
		switch by {
		case ByChat:
			k = u.Instance + ":" + u.ChatID
		case ByAgent:
			k = u.Agent
		case ByDay:
			k = u.At.In(loc).Format(time.DateOnly)
		default:
			k = u.Sender
		}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Row{Key: k})
		}
		out[i].Add(u)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if by == ByDay {
			return out[i].Key < out[j].Key
		}
		if out[i].CostUSD != out[j].CostUSD {
			return out[i].CostUSD > out[j].CostUSD
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// DayStart is the start of the day that holds t in loc (nil: local), and
// of the day n days before it.
func DayStart(t time.Time, loc *time.Location, daysBack int) time.Time {
	if loc == nil {
		loc = time.Local
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day()-daysBack, 0, 0, 0, 0, loc)
}

// Windows are the three windows /usage shows: today, the last 7 days and
// the last 30 days (each up to now, starting at a midnight of loc).
func Windows(now time.Time, loc *time.Location) [3]time.Time {
	return [3]time.Time{DayStart(now, loc, 0), DayStart(now, loc, 6), DayStart(now, loc, 29)}
}

// WindowNames name Windows.
var WindowNames = [3]string{"today", "7 days", "30 days"}

// Sums sums rows into the three windows.
func Sums(rows []store.TurnUsage, w [3]time.Time) [3]store.UsageSum {
	var s [3]store.UsageSum
	for _, u := range rows {
		for i, since := range w {
			if !u.At.Before(since) {
				s[i].Add(u)
			}
		}
	}
	return s
}

// Money is a cost as people read it: "$0.42", "$0.0031" below a cent.
func Money(usd float64) string {
	if usd > 0 && usd < 0.01 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Line is one window's sum in a sentence: "$0.42, 3 turns"; "~$0.42, 3
// turns (1 estimated)" when some of it is an estimate.
func Line(s store.UsageSum) string {
	turns := "turns"
	if s.Turns == 1 {
		turns = "turn"
	}
	if s.Estimates > 0 {
		return fmt.Sprintf("~%s, %d %s (%d estimated)", Money(s.CostUSD), s.Turns, turns, s.Estimates)
	}
	return fmt.Sprintf("%s, %d %s", Money(s.CostUSD), s.Turns, turns)
}

// SumCost is a sum's cost as a table shows it: "~$0.42" when part of it is
// an estimate.
func SumCost(s store.UsageSum) string {
	if s.Estimates > 0 {
		return "~" + Money(s.CostUSD)
	}
	return Money(s.CostUSD)
}

// EstimatesNote says what the "~" of SumCost means, for a total that has
// estimates ("" when it has none).
func EstimatesNote(total store.UsageSum) string {
	if total.Estimates == 0 {
		return ""
	}
	turns := "turns"
	if total.Estimates == 1 {
		turns = "turn"
	}
	return fmt.Sprintf("~ includes estimates: %s of %d %s — stopped or timed-out turns priced from their tokens, or rows recomputed from a ledger that stored claude's running totals.\n",
		Money(total.EstimatedUSD), total.Estimates, turns)
}

// Tokens is a count of tokens, short: "1.2k", "3.4M".
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Table writes rows as a plain-text table: key, turns, cost, tokens in
// and out (cache reads with the input).
func Table(title string, rows []Row) string {
	var b strings.Builder
	width := len(title)
	for _, r := range rows {
		width = max(width, len(r.Key))
	}
	fmt.Fprintf(&b, "%-*s  %6s  %10s  %9s  %9s\n", width, title, "turns", "cost", "input", "output")
	var total store.UsageSum
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %6d  %10s  %9s  %9s\n", width, r.Key, r.Turns, SumCost(r.UsageSum), Tokens(r.InputTokens+r.CacheReadTokens+r.CacheCreationTokens), Tokens(r.OutputTokens))
		total.Turns += r.Turns
		total.CostUSD += r.CostUSD
		total.InputTokens += r.InputTokens + r.CacheReadTokens + r.CacheCreationTokens
		total.OutputTokens += r.OutputTokens
		total.Estimates += r.Estimates
		total.EstimatedUSD += r.EstimatedUSD
	}
	if len(rows) > 1 {
		fmt.Fprintf(&b, "%-*s  %6d  %10s  %9s  %9s\n", width, "total", total.Turns, SumCost(total), Tokens(total.InputTokens), Tokens(total.OutputTokens))
	}
	if note := EstimatesNote(total); note != "" {
		b.WriteString("\n" + note)
	}
	return b.String()
}
