package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a length of time written in HCL as a Go duration string:
// "90s", "10m", "1h30m", and for long spans whole days before it: "30d",
// "1d12h" (a day is 24 hours). Load refuses values that do not parse or
// are not positive, so Duration() of a loaded value is > 0 — except for
// the settings that say they may be empty or "0s" (queue.debounce, a
// plugin's debounce, access.pairing_ttl), whose Duration() is then 0.
type Duration string

// Duration returns d as a time.Duration, 0 when d does not parse.
func (d Duration) Duration() time.Duration {
	v, err := d.parse()
	if err != nil {
		return 0
	}
	return v
}

// maxDays keeps a day count inside time.Duration (about 106,000 days).
const maxDays = 100000

func (d Duration) parse() (time.Duration, error) {
	s := string(d)
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(days)
	if err != nil || n < 0 || n > maxDays || strings.HasPrefix(days, "+") {
		return 0, fmt.Errorf("time: invalid duration %q", s)
	}
	v := time.Duration(n) * 24 * time.Hour
	if rest == "" {
		return v, nil
	}
	r, err := time.ParseDuration(rest)
	if err != nil || r < 0 || strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
		return 0, fmt.Errorf("time: invalid duration %q", s)
	}
	return v + r, nil
}
