package budget

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/store"
)

// memStore is a recording ledger and audit trail in memory.
type memStore struct {
	mu    sync.Mutex
	usage []store.TurnUsage
	audit []store.AuditEvent
	now   func() time.Time
}

func (m *memStore) SumUsage(_ context.Context, f store.UsageFilter) (store.UsageSum, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s store.UsageSum
	for _, u := range m.usage {
		if f.Matches(u) {
			s.Add(u)
		}
	}
	return s, nil
}

func (m *memStore) Audit(_ context.Context, e store.AuditEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.At.IsZero() {
		e.At = m.now()
	}
	m.audit = append(m.audit, e)
	return nil
}

func (m *memStore) ListAudit(_ context.Context, f store.AuditFilter, _ int) ([]store.AuditEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.AuditEvent
	for _, e := range m.audit {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memStore) spend(at time.Time, agent, chat, sender string, usd float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage = append(m.usage, store.TurnUsage{At: at, Agent: agent, Instance: "tg", ChatID: chat, Sender: sender, CostUSD: usd})
}

func (m *memStore) decisions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.audit {
		out = append(out, e.Decision+" "+e.Subject)
	}
	return out
}

var berlin = func() *time.Location {
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return l
}()

func fixture(top *config.Budget, agents map[string]*config.Budget) (*Budgets, *memStore, *tstimetest.Fake) {
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, berlin))
	st := &memStore{now: clk.Now}
	b := New(st, clk, func() (Rules, *time.Location) { return Rules{Top: top, Agents: agents}, berlin })
	return b, st, clk
}

// TestSenderOverBudgetIsRefused: a sender over per_sender_daily_usd is
// refused (the notice names the budget, the amount and the reset) while
// another sender of the same group is served; at midnight of the zone the
// budget is fresh again; an owner is exempt unless owners = true.
func TestSenderOverBudgetIsRefused(t *testing.T) {
	ctx := context.Background()
	top := &config.Budget{PerSenderDailyUSD: 1}
	b, st, clk := fixture(top, nil)
	now := clk.Now()
	st.spend(now.Add(-time.Hour), "main", "-100", "tg:1", 0.7)
	st.spend(now.Add(-30*time.Minute), "main", "-100", "tg:1", 0.35)
	st.spend(now.Add(-11*time.Hour), "main", "-100", "tg:2", 5) // yesterday in Berlin

	alice := Turn{Agent: "main", Instance: "tg", ChatID: "-100", Sender: "tg:1"}
	v, err := b.Check(ctx, alice)
	if err != nil || v.Refused == nil {
		t.Fatalf("alice over her budget: %+v, %v", v, err)
	}
	notice := v.Refused.Refusal(now)
	for _, want := range []string{"your daily budget", "$1.05 of $1.00", "budget.per_sender_daily_usd", "00:00 (CET) tomorrow"} {
		if !strings.Contains(notice, want) {
			t.Errorf("notice %q lacks %q", notice, want)
		}
	}
	if v, err := b.Check(ctx, Turn{Agent: "main", Instance: "tg", ChatID: "-100", Sender: "tg:2"}); err != nil || v.Refused != nil || v.Warn != nil {
		t.Errorf("bob (spent yesterday only): %+v, %v", v, err)
	}
	owner := alice
	owner.Owner = true
	if v, _ := b.Check(ctx, owner); v.Refused != nil {
		t.Errorf("an owner is exempt: %+v", v.Refused)
	}
	yes := true
	top.Owners = &yes
	if v, _ := b.Check(ctx, owner); v.Refused == nil {
		t.Error("with owners = true the owner is held to the budget too")
	}
	top.Owners = nil

	clk.Set(time.Date(2026, 11, 26, 0, 0, 1, 0, berlin))
	if v, _ := b.Check(ctx, alice); v.Refused != nil {
		t.Errorf("after midnight alice's budget is fresh: %+v", v.Refused)
	}
	if got := st.decisions(); len(got) != 2 || got[0] != "refused per_sender_daily_usd tg:1" {
		t.Errorf("audit %v", got)
	}
}

// TestWarnOncePerPeriod: at warn_at the chat is warned once a period —
// not again by this host, nor after a restart (a new Budgets over the
// same trail); the next period warns again.
func TestWarnOncePerPeriod(t *testing.T) {
	ctx := context.Background()
	top := &config.Budget{PerChatDailyUSD: 2, WarnAt: "75%"}
	b, st, clk := fixture(top, nil)
	turn := Turn{Agent: "main", Instance: "tg", ChatID: "5", Sender: "tg:5"}
	st.spend(clk.Now(), "main", "5", "tg:5", 1.4)
	if v, _ := b.Check(ctx, turn); v.Warn != nil {
		t.Fatalf("70 %% is under warn_at 75 %%: %+v", v.Warn)
	}
	st.spend(clk.Now(), "main", "5", "tg:5", 0.2)
	v, _ := b.Check(ctx, turn)
	if v.Warn == nil || v.Refused != nil {
		t.Fatalf("80 %%: %+v", v)
	}
	if w := v.Warn.Warning(clk.Now()); !strings.Contains(w, "this chat's daily budget is 80 % used") || !strings.Contains(w, "$1.60 of $2.00") {
		t.Errorf("warning %q", w)
	}
	if v, _ := b.Check(ctx, turn); v.Warn != nil {
		t.Error("warned twice")
	}
	restarted := New(st, clk, func() (Rules, *time.Location) { return Rules{Top: top}, berlin })
	if v, _ := restarted.Check(ctx, turn); v.Warn != nil {
		t.Error("warned again after a restart")
	}
	clk.Advance(24 * time.Hour)
	st.spend(clk.Now(), "main", "5", "tg:5", 1.9)
	if v, _ := restarted.Check(ctx, turn); v.Warn == nil {
		t.Error("the next day's warning")
	}
}

// TestAgentBudgetReplacesTop: an agent's own attribute replaces the top
// level's and counts only its turns; per_agent_monthly_usd counts the
// agent's calendar month.
func TestAgentBudgetReplacesTop(t *testing.T) {
	ctx := context.Background()
	top := &config.Budget{PerSenderDailyUSD: 1, PerAgentMonthlyUSD: 10}
	ops := &config.Budget{PerSenderDailyUSD: 5}
	b, st, clk := fixture(top, map[string]*config.Budget{"ops": ops})
	now := clk.Now()
	st.spend(now, "main", "5", "tg:5", 2) // over main's (top-level) sender budget
	if v, _ := b.Check(ctx, Turn{Agent: "main", Instance: "tg", ChatID: "5", Sender: "tg:5"}); v.Refused == nil || v.Refused.Where != "budget" {
		t.Errorf("main: %+v", v.Refused)
	}
	v, _ := b.Check(ctx, Turn{Agent: "ops", Instance: "tg", ChatID: "6", Sender: "tg:5"})
	if v.Refused != nil {
		t.Errorf("ops counts only its own turns against its $5: %+v", v.Refused)
	}
	st.spend(time.Date(2026, 11, 1, 0, 30, 0, 0, berlin), "ops", "6", "tg:7", 9.5)
	st.spend(time.Date(2026, 10, 31, 23, 30, 0, 0, berlin), "ops", "6", "tg:7", 50) // October
	v, _ = b.Check(ctx, Turn{Agent: "ops", Instance: "tg", ChatID: "6", Sender: "tg:8"})
	if v.Refused != nil || v.Warn == nil || v.Warn.Name != "per_agent_monthly_usd" {
		t.Fatalf("ops at 95 %% of its month: %+v", v)
	}
	st.spend(now, "ops", "6", "tg:7", 0.5)
	v, _ = b.Check(ctx, Turn{Agent: "ops", Instance: "tg", ChatID: "6", Sender: "tg:8"})
	if v.Refused == nil || !strings.Contains(v.Refused.Refusal(now), "agent ops's monthly budget") || !strings.Contains(v.Refused.Refusal(now), "Tue 1 Dec 00:00") {
		t.Fatalf("ops over its month: %+v", v.Refused)
	}
}

func TestPeriod(t *testing.T) {
	now := time.Date(2026, 3, 29, 12, 0, 0, 0, berlin) // the day clocks go forward
	s, e := Period(now, berlin, false)
	if e.Sub(s) != 23*time.Hour || s.Hour() != 0 || e.Day() != 30 {
		t.Errorf("day %v – %v", s, e)
	}
	s, e = Period(now, berlin, true)
	if s.Day() != 1 || s.Month() != 3 || e.Month() != 4 || e.Day() != 1 {
		t.Errorf("month %v – %v", s, e)
	}
}

// TestAdmitCountsRunningTurns: turns of one sender started at once are
// admitted only while the ledger and what the running ones reserve (the
// costliest turn of the day, $0.30) leave room under the $1 budget; one
// that does not fit waits for a running turn to end and is checked again;
// with nothing running a turn starts while the ledger is under the
// budget. The budget is overshot by less than one turn.
func TestAdmitCountsRunningTurns(t *testing.T) {
	t.Parallel()
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	m := &memStore{now: clk.Now}
	b := New(m, clk, func() (Rules, *time.Location) {
		return Rules{Top: &config.Budget{PerSenderDailyUSD: 1}}, time.UTC
	})
	alice := Turn{Agent: "main", Instance: "tg", ChatID: "1", Sender: "tg:5"}
	ctx := context.Background()
	// A cancelled context: Admit returns at once when the turn would wait.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	admit := func(ctx context.Context, chat string) (Verdict, func(), error) {
		t.Helper()
		tt := alice
		tt.ChatID = chat
		return b.Admit(ctx, tt)
	}
	// An empty ledger tells nothing of what a turn costs: one at a time.
	_, first, err := admit(ctx, "1")
	if err != nil || first == nil {
		t.Fatalf("the first turn: %v", err)
	}
	if _, r, err := admit(cancelled, "2"); err == nil || r != nil {
		t.Fatalf("a second turn beside the first with nothing known of costs ran (%v)", err)
	}
	m.spend(clk.Now(), "main", "1", "tg:5", 0.30)
	first()

	// $0.30 spent: two more fit beside each other ($0.30 + 2 × $0.30).
	_, ra, err := admit(ctx, "1")
	if err != nil || ra == nil {
		t.Fatal("turn A not admitted", err)
	}
	_, rb, err := admit(ctx, "2")
	if err != nil || rb == nil {
		t.Fatal("turn B not admitted beside A", err)
	}
	if _, r, err := admit(cancelled, "3"); err == nil || r != nil {
		t.Fatalf("turn C admitted beside A and B: $%.2f would be spent of $1", 1.20)
	}
	// C waits; A's end ($0.60 then) leaves no room beside B; B's does.
	type result struct {
		v Verdict
		r func()
	}
	got := make(chan result, 1)
	go func() {
		v, r, _ := admit(ctx, "3")
		got <- result{v, r}
	}()
	m.spend(clk.Now(), "main", "1", "tg:5", 0.30)
	ra()
	m.spend(clk.Now(), "main", "2", "tg:5", 0.30)
	rb()
	c := <-got
	if c.r == nil || c.v.Refused != nil {
		t.Fatalf("turn C after A and B ended ($0.90 spent, none running): %+v", c.v)
	}
	if _, r, err := admit(cancelled, "4"); err == nil || r != nil {
		t.Fatal("turn D admitted beside C with $0.90 spent")
	}
	m.spend(clk.Now(), "main", "3", "tg:5", 0.30)
	c.r()
	v, r, err := admit(ctx, "4")
	if err != nil || r != nil || v.Refused == nil || v.Refused.Spent > 1+0.30 {
		t.Fatalf("turn D after $1.20 spent: %+v, %v", v, err)
	}
}

// TestAdmitBurst: ten turns of one sender at once, each costing $0.30,
// against a $1 budget: the ledger ends at most one turn over it.
func TestAdmitBurst(t *testing.T) {
	t.Parallel()
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	m := &memStore{now: clk.Now}
	b := New(m, clk, func() (Rules, *time.Location) {
		return Rules{Top: &config.Budget{PerSenderDailyUSD: 1}}, time.UTC
	})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := string(rune('a' + i))
			v, release, err := b.Admit(context.Background(), Turn{Agent: "main", Instance: "tg", ChatID: chat, Sender: "tg:5"})
			if err != nil || v.Refused != nil {
				return
			}
			m.spend(clk.Now(), "main", chat, "tg:5", 0.30)
			release()
		}()
	}
	wg.Wait()
	sum, _ := m.SumUsage(context.Background(), store.UsageFilter{Sender: "tg:5"})
	if sum.CostUSD > 1+0.30+1e-9 || sum.CostUSD < 1 {
		t.Errorf("a burst of ten spent $%.2f in %d turns against $1: more than one turn over", sum.CostUSD, sum.Turns)
	}
}
