package usage

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// TestGroup: sums by person, chat, agent and day, table-tested over one
// set of rows; days in the zone given (a turn at 23:30 UTC is the next
// day in Berlin).
func TestGroup(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	rows := []store.TurnUsage{
		{At: at("2026-11-24T10:00:00Z"), Agent: "main", Instance: "tg", ChatID: "-100", Sender: "tg:1", CostUSD: 0.5, InputTokens: 100, OutputTokens: 10},
		{At: at("2026-11-24T23:30:00Z"), Agent: "main", Instance: "tg", ChatID: "-100", Sender: "tg:2", CostUSD: 0.25, InputTokens: 50, OutputTokens: 5},
		{At: at("2026-11-25T08:00:00Z"), Agent: "ops", Instance: "dc", ChatID: "7", Sender: "tg:1", CostUSD: 1, InputTokens: 10, OutputTokens: 1},
		{At: at("2026-11-25T09:00:00Z"), Agent: "ops", Instance: "dc", ChatID: "7", Sender: "schedule:daily", CostUSD: 0.125},
	}
	for _, c := range []struct {
		by   string
		want []string // key=cost/turns
	}{
		{ByPerson, []string{"tg:1=1.500/2", "tg:2=0.250/1", "schedule:daily=0.125/1"}},
		{ByChat, []string{"dc:7=1.125/2", "tg:-100=0.750/2"}},
		{ByAgent, []string{"ops=1.125/2", "main=0.750/2"}},
		{ByDay, []string{"2026-11-24=0.500/1", "2026-11-25=1.375/3"}},
	} {
		var keys []string
		for _, r := range Group(rows, c.by, berlin) {
			keys = append(keys, fmt.Sprintf("%s=%.3f/%d", r.Key, r.CostUSD, r.Turns))
		}
		if strings.Join(keys, " ") != strings.Join(c.want, " ") {
			t.Errorf("by %s: %v, want %v", c.by, keys, c.want)
		}
	}
	now := at("2026-11-25T12:00:00Z")
	s := Sums(rows, Windows(now, berlin))
	if s[0].Turns != 3 || math.Abs(s[0].CostUSD-1.375) > 1e-9 || s[1].Turns != 4 || s[2].Turns != 4 {
		t.Errorf("windows %+v", s)
	}
	tab := Table("person", Group(rows, ByPerson, berlin))
	if !strings.Contains(tab, "total") || !strings.Contains(tab, "$1.88") || strings.Contains(tab, "~") {
		t.Errorf("table:\n%s", tab)
	}
	// A stopped turn priced from its tokens is an estimate: its groups
	// and the total say so.
	rows = append(rows, store.TurnUsage{At: at("2026-11-25T11:00:00Z"), Agent: "main", Instance: "tg", ChatID: "-100", Sender: "tg:6", CostUSD: 0.21, Estimate: true, Outcome: "aborted"})
	tab = Table("person", Group(rows, ByPerson, berlin))
	if !strings.Contains(tab, "~$0.21") || !strings.Contains(tab, "~$2.08") || !strings.Contains(tab, "~ includes estimates: $0.21 of 1 turn") {
		t.Errorf("table with an estimate:\n%s", tab)
	}
	if l := Line(Sums(rows, Windows(now, berlin))[0]); !strings.HasPrefix(l, "~$") || !strings.HasSuffix(l, "(1 estimated)") {
		t.Errorf("line with an estimate: %q", l)
	}
}
