package config

import (
	"strconv"
	"strings"
	"time"
)

// Duration is a length of time written in HCL as a Go duration string:
// "90s", "10m", "1h30m", with days as a leading "d" term: "30d", "1d12h".
// Load refuses values that do not parse or are not positive, so
// Duration() of a loaded value is > 0 — except for the settings that say
// they may be empty or "0s" (queue.debounce, a plugin's debounce,
// agent.media_keep, access.pairing_ttl), whose Duration() is then 0.
type Duration string

// Duration returns d as a time.Duration, 0 when d does not parse.
func (d Duration) Duration() time.Duration {
	v, err := d.parse()
	if err != nil {
		return 0
	}
	return v
}

// maxDays keeps a days term from overflowing time.Duration (≈ 292 years).
const maxDays = 100 * 366

func (d Duration) parse() (time.Duration, error) {
	s := string(d)
	days, rest, ok := strings.Cut(s, "d")
	if !ok || days == "" || strings.Trim(days, "0123456789") != "" {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(days)
	if err != nil || n > maxDays {
		return 0, &time.ParseError{Layout: "duration", Value: s, Message: ": days out of range"}
	}
	v := time.Duration(n) * 24 * time.Hour
	if rest == "" {
		return v, nil
	}
	r, err := time.ParseDuration(rest)
	if err != nil || r < 0 {
		return 0, &time.ParseError{Layout: "duration", Value: s, Message: ": not a duration"}
	}
	return v + r, nil
}
