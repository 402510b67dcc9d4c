// Package cron parses five-field cron expressions and says when they next
// match (schedule blocks; the scheduler).
package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed five-field cron expression: minute, hour, day of month,
// month, day of week (0 or 7 is Sunday). Fields take "*", numbers, names
// (jan–dec, sun–sat), ranges "a-b", steps "*/n" and "a-b/n", and lists
// "a,b". As in cron(8), when both day fields are restricted a day matches
// either.
type Cron struct {
	minute, hour, dom, month, dow uint64 // bit i set: value i matches
	domStar, dowStar              bool
}

var (
	monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}
	dayNames   = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
)

// Parse parses a five-field expression.
func Parse(expr string) (Cron, error) {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return Cron{}, fmt.Errorf("a cron expression has five fields (minute hour day-of-month month day-of-week), %q has %d", expr, len(f))
	}
	var c Cron
	var err error
	if c.minute, err = field(f[0], 0, 59, nil); err != nil {
		return Cron{}, fmt.Errorf("minute: %w", err)
	}
	if c.hour, err = field(f[1], 0, 23, nil); err != nil {
		return Cron{}, fmt.Errorf("hour: %w", err)
	}
	if c.dom, err = field(f[2], 1, 31, nil); err != nil {
		return Cron{}, fmt.Errorf("day of month: %w", err)
	}
	if c.month, err = field(f[3], 1, 12, monthNames); err != nil {
		return Cron{}, fmt.Errorf("month: %w", err)
	}
	if c.dow, err = field(f[4], 0, 7, dayNames); err != nil {
		return Cron{}, fmt.Errorf("day of week: %w", err)
	}
	if c.dow&(1<<7) != 0 {
		c.dow |= 1 // 7 is Sunday too
	}
	c.domStar, c.dowStar = f[2] == "*" || strings.HasPrefix(f[2], "*/"), f[4] == "*" || strings.HasPrefix(f[4], "*/")
	return c, nil
}

func field(s string, lo, hi int, names map[string]int) (uint64, error) {
	var bits uint64
	for _, part := range strings.Split(s, ",") {
		rng, stepS, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepS)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("bad step %q", stepS)
			}
			step = n
		}
		a, b := lo, hi
		if rng != "*" {
			as, bs, isRange := strings.Cut(rng, "-")
			var err error
			if a, err = value(as, lo, hi, names); err != nil {
				return 0, err
			}
			b = a
			if isRange {
				if b, err = value(bs, lo, hi, names); err != nil {
					return 0, err
				}
				if b < a {
					return 0, fmt.Errorf("range %q runs backwards", rng)
				}
			} else if hasStep {
				b = hi // "a/n": from a to the end
			}
		}
		for v := a; v <= b; v += step {
			bits |= 1 << v
		}
	}
	return bits, nil
}

func value(s string, lo, hi int, names map[string]int) (int, error) {
	if v, ok := names[strings.ToLower(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%q is not a value from %d to %d", s, lo, hi)
	}
	return v, nil
}

// Next is the first time after t, to the minute, that c matches in loc;
// the zero time when none comes within five years (e.g. "0 0 30 2 *").
func (c Cron) Next(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc).Truncate(time.Minute).Add(time.Minute)
	end := t.AddDate(5, 0, 0)
	for t.Before(end) {
		switch {
		case c.month&(1<<int(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc)
		case !c.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
		case c.hour&(1<<t.Hour()) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, loc)
		case c.minute&(1<<t.Minute()) == 0:
			t = t.Add(time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}

func (c Cron) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<t.Day()) != 0
	dow := c.dow&(1<<int(t.Weekday())) != 0
	switch {
	case c.domStar && c.dowStar:
		return true
	case c.domStar:
		return dow
	case c.dowStar:
		return dom
	}
	return dom || dow
}
