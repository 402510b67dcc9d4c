package whatsapp

import (
	"context"
	"github.com/clawhost/clawhost/sdk/channel"
	"testing"
	"time"
)

// TestPacing: sends are spaced by a pause drawn from [min, max] with the
// injected randomness; a send after a quiet spell goes at once.
func TestPacing(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	var slept []time.Duration
	draws := []float64{0, 0.5, 0.999}
	p := &pacer{min: time.Second, max: 3 * time.Second,
		now: func() time.Time { return now },
		rand: func() float64 {
			d := draws[0]
			draws = draws[1:]
			return d
		},
		sleep: func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			now = now.Add(d)
			return nil
		},
	}
	ctx := t.Context()
	for range 3 {
		if err := p.wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// 1st at once (gap 1s drawn), 2nd after 1s (gap 2s), 3rd after 2s.
	if len(slept) != 2 || slept[0] != time.Second || slept[1] != 2*time.Second {
		t.Fatalf("slept %v, want [1s 2s]", slept)
	}
	now = now.Add(time.Hour) // quiet: the next send goes at once
	draws = []float64{0.25}
	if err := p.wait(ctx); err != nil || len(slept) != 2 {
		t.Fatalf("after a quiet hour: slept %v, %v", slept, err)
	}
	if got := p.next.Sub(now); got != 1500*time.Millisecond {
		t.Errorf("next gap %v, want 1.5s", got)
	}
}

func TestPacingCanceled(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	p := &pacer{min: time.Minute, max: time.Minute, now: func() time.Time { return now }, rand: func() float64 { return 0 }, sleep: channel.Sleep}
	ctx, cancel := context.WithCancel(t.Context())
	if err := p.wait(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := p.wait(ctx); err == nil {
		t.Error("a canceled wait returned nil")
	}
}
