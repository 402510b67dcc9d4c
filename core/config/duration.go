package config

import "time"

// Duration is a length of time written in HCL as a Go duration string:
// "90s", "10m", "1h30m". Load refuses values that do not parse or are not
// positive, so Duration() of a loaded value is > 0 — except for the
// settings that say they may be empty or "0s" (queue.debounce and a
// plugin's debounce), whose Duration() is then 0.
type Duration string

// Duration returns d as a time.Duration, 0 when d does not parse.
func (d Duration) Duration() time.Duration {
	v, err := d.parse()
	if err != nil {
		return 0
	}
	return v
}

func (d Duration) parse() (time.Duration, error) { return time.ParseDuration(string(d)) }
