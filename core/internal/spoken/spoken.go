// Package spoken says durations as people do in chat: "1 hour",
// "2 hours 30 minutes", "10 minutes".
package spoken

import (
	"fmt"
	"time"
)

// Precise says d to the second under a minute ("90 seconds" is "2
// minutes"), else as Duration: for settings people chose in seconds.
func Precise(d time.Duration) string {
	if s := int(d.Round(time.Second) / time.Second); s < 60 && s > 0 {
		if s == 1 {
			return "1 second"
		}
		return fmt.Sprintf("%d seconds", s)
	}
	return Duration(d)
}

// Duration says d to the minute; under half a minute it is "less than a
// minute".
func Duration(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case h > 0 && m > 0:
		return unit(h, "hour") + " " + unit(m, "minute")
	case h > 0:
		return unit(h, "hour")
	case m > 0:
		return unit(m, "minute")
	}
	return "less than a minute"
}
