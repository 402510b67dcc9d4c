package cron

import (
	"testing"
	"time"
)

func TestCronNext(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata")
	}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, berlin)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ expr, from, want string }{
		{"0 9 * * 1-5", "2026-11-20 09:00", "2026-11-23 09:00"}, // Friday 9:00 → Monday
		{"0 9 * * 1-5", "2026-11-23 08:59", "2026-11-23 09:00"},
		{"*/15 * * * *", "2026-11-22 10:07", "2026-11-22 10:15"},
		{"30 8 1 * *", "2026-11-22 00:00", "2026-12-01 08:30"},
		{"0 0 * * sun", "2026-11-22 00:00", "2026-11-29 00:00"}, // the 22nd is a Sunday: strictly after
		{"0 0 * * 7", "2026-11-23 00:00", "2026-11-29 00:00"},
		{"0 12 13 * fri", "2026-11-01 00:00", "2026-11-06 12:00"}, // day 13 or a Friday
		{"0 2 * * *", "2026-03-28 03:00", "2026-03-30 02:00"},     // 02:00 does not exist on 29 March (DST)
		{"0 0 1 jan,jul *", "2026-02-01 00:00", "2026-07-01 00:00"},
	} {
		got := mustCron(t, c.expr).Next(at(c.from), berlin)
		if want := at(c.want); !got.Equal(want) {
			t.Errorf("%q after %s: %s, want %s", c.expr, c.from, got.Format("2006-01-02 15:04 MST"), c.want)
		}
	}
	if got := mustCron(t, "0 0 30 2 *").Next(at("2026-01-01 00:00"), berlin); !got.IsZero() {
		t.Errorf("30 February came: %s", got)
	}
}

func TestCronErrors(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "x * * * *"} {
		if _, err := Parse(expr); err == nil {
			t.Errorf("%q parsed", expr)
		}
	}
}

func mustCron(t *testing.T, expr string) Cron {
	t.Helper()
	c, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
