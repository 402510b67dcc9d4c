package probe

import "testing"

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Verdict{"ok": OK, "warn": Warn, "fail": Fail, "": Warn, "error": Warn} {
		if got := ParseVerdict(in); got != want {
			t.Errorf("ParseVerdict(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWorst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		checks []Verdict
		want   Verdict
	}{
		{nil, OK},
		{[]Verdict{OK, OK}, OK},
		{[]Verdict{OK, Warn, OK}, Warn},
		{[]Verdict{Fail, Warn}, Fail},
		{[]Verdict{Warn, Fail, OK}, Fail},
	} {
		var r Report
		for _, v := range tc.checks {
			r.Checks = append(r.Checks, Check{Verdict: v})
		}
		if got := r.Worst(); got != tc.want {
			t.Errorf("Worst of %v = %q, want %q", tc.checks, got, tc.want)
		}
	}
}

func TestIdentityString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   Identity
		want string
	}{
		{Identity{}, ""},
		{Identity{ID: "1", Handle: "@bot", Name: "Bot", Link: "https://t.me/bot"}, "@bot, https://t.me/bot"},
		{Identity{ID: "1", Name: "Bot"}, "Bot"},
		{Identity{ID: "1"}, "1"},
	} {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.id, got, tc.want)
		}
	}
}
