package spoken

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Hour: "1 hour", 2*time.Hour + 30*time.Minute: "2 hours 30 minutes", 10 * time.Minute: "10 minutes",
		time.Minute: "1 minute", 90 * time.Minute: "1 hour 30 minutes", 20 * time.Second: "less than a minute",
		59*time.Minute + 50*time.Second: "1 hour",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPrecise(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{time.Second: "1 second", 2 * time.Second: "2 seconds", 59 * time.Second: "59 seconds", 90 * time.Second: "2 minutes", 5 * time.Minute: "5 minutes"} {
		if got := Precise(d); got != want {
			t.Errorf("Precise(%v) = %q, want %q", d, got, want)
		}
	}
}
