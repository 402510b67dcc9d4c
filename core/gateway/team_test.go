package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

func groupFrom(sender, text string) channel.InboundMessage {
	return channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-100", MessageID: fmt.Sprintf("%s-%d", sender, time.Now().UnixNano()),
		Sender: channel.Sender{ID: sender, Name: "User " + sender}, Text: text, Timestamp: time.Now()}
}

// TestInProcessBudget: in one group, Alice's turns cost $0.50 each against
// a $1 daily budget warned at 50 %: her first runs, her second runs after
// the warning, her third is answered with the refusal (which names the
// budget, the amount and the reset) and never reaches claude, while Bob
// is served; an owner is exempt; the next day (the fake clock) Alice runs
// again. The ledger has a row per turn that ran; the refusal and the
// warning are in the audit trail.
func TestInProcessBudget(t *testing.T) {
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))
	g, ports, agent := inproc(t, func(s *Settings) {
		s.Access = access.Policy{DMPolicy: access.PolicyAllowlist, Owners: []string{"tg:9"}, GroupPolicy: access.PolicyAllowlist,
			Groups: []string{"tg:-100"}, GroupAllowFrom: []string{"tg:*"}}
		s.Turn.Location = time.UTC
		s.Budgets = budget.Rules{Top: &config.Budget{PerSenderDailyUSD: 1, WarnAt: "0.5"}}
	}, func(o *Options) { o.Clock, o.Now = clk, clk.Now })
	agent.cost, agent.whole = 0.5, true
	ctx := context.Background()
	seen := 0
	say := func(who, text string) string {
		t.Helper()
		if err := g.Inbound(ctx, "tg", []channel.InboundMessage{groupFrom(who, text)}); err != nil {
			t.Fatal(err)
		}
		return ports.next(t, "-100", &seen)
	}
	if got := say("5", "one"); !strings.Contains(got, "one") {
		t.Fatalf("alice's first: %q", got)
	}
	if got := say("5", "two"); !strings.HasPrefix(got, "Budget: your daily budget is 50 % used — $0.50 of $1.00 (budget.per_sender_daily_usd)") {
		t.Fatalf("the warning: %q", got)
	}
	if got := ports.next(t, "-100", &seen); !strings.Contains(got, "two") {
		t.Fatalf("alice's second after the warning: %q", got)
	}
	ran := len(agent.prompts)
	if got := say("5", "three"); got != "Not run: your daily budget is spent — $1.00 of $1.00 (budget.per_sender_daily_usd). It resets at 00:00 (UTC) tomorrow; an owner can raise it in the configuration." {
		t.Fatalf("the refusal: %q", got)
	}
	if got := say("6", "bob"); !strings.Contains(got, "bob") || strings.Contains(got, "Budget") {
		t.Fatalf("bob: %q", got)
	}
	for i := range 3 {
		if got := say("9", fmt.Sprintf("owner %d", i)); !strings.Contains(got, "owner") {
			t.Fatalf("the owner's turn %d: %q", i, got)
		}
	}
	if n := len(agent.prompts); n != ran+4 {
		t.Errorf("%d turns after the refusal, want 4 (bob's and the owner's): the refused message reached claude", n-ran)
	}
	clk.Advance(9 * time.Hour) // 00:00 UTC
	if got := say("5", "four"); !strings.Contains(got, "four") {
		t.Fatalf("alice the next day: %q", got)
	}
	sum, err := g.store.SumUsage(ctx, store.UsageFilter{Sender: "tg:5"})
	if err != nil || sum.Turns != 3 || sum.CostUSD != 1.5 || sum.InputTokens != 3000 {
		t.Errorf("alice's ledger: %+v, %v", sum, err)
	}
	rows, err := g.store.ListAudit(ctx, store.AuditFilter{Kind: store.AuditBudget}, 0)
	if err != nil || len(rows) != 2 || rows[0].Decision != "refused" || rows[1].Decision != "warned" || rows[0].Subject != "per_sender_daily_usd tg:5" || rows[0].ChatID != "-100" {
		t.Errorf("audit %+v, %v", rows, err)
	}
}

// TestInProcessFlood: 100 messages in a burst from one sender under
// access.rate "5/min" (debounce off, each its own turn): 5 are answered,
// the sender is told once, the other 94 are recorded as dropped ("rate
// limited") and never reach claude; another sender is served; the audit
// trail has one row for the window.
func TestInProcessFlood(t *testing.T) {
	clk := tstimetest.NewFake(time.Now())
	drops := dropRec{nopObserver{}, make(chan string, 128)}
	g, ports, agent := inproc(t, func(s *Settings) { s.Rate = Rate{N: 5, Per: time.Minute} }, func(o *Options) { o.Now, o.Observer = clk.Now, drops })
	ctx := context.Background()
	var burst []channel.InboundMessage
	for i := range 100 {
		m := dmFrom("5", fmt.Sprintf("m%03d", i))
		m.MessageID = fmt.Sprintf("burst-%d", i)
		burst = append(burst, m)
	}
	if err := g.Inbound(ctx, "tg", burst); err != nil {
		t.Fatal(err)
	}
	sendDM(t, ctx, g, "6", "other")
	seen6 := 0
	if got := ports.next(t, "6", &seen6); !strings.Contains(got, "other") {
		t.Fatalf("the other sender: %q", got)
	}
	seen, answers, notices := 0, 0, 0
	for answers+notices < 6 {
		got := ports.next(t, "5", &seen)
		switch {
		case strings.HasPrefix(got, "re: "):
			answers++
		case strings.HasPrefix(got, "You are sending messages faster than this bot takes them (at most 5 a minute)"):
			notices++
		default:
			t.Fatalf("unexpected %q", got)
		}
	}
	if answers != 5 || notices != 1 {
		t.Fatalf("%d answers, %d notices", answers, notices)
	}
	// Every message of the burst over the limit decided (the answered
	// ones were seen) before the clock moves on: 94 dropped, 1 told.
	for n := 0; n < 95; {
		select {
		case r := <-drops.drops:
			if r == "rate limited" {
				n++
			}
		case <-time.After(10 * time.Second): // a bound on a failing test
			t.Fatalf("%d of 95 messages over the limit decided", n)
		}
	}
	// A minute later the bucket is full again: the next message passes.
	clk.Advance(time.Minute)
	sendDM(t, ctx, g, "5", "later")
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "later") {
		t.Fatalf("a minute later: %q", got)
	}
	if n := len(agent.prompts); n != 7 {
		t.Errorf("%d turns, want 7 (5 of the burst, the other sender's, the later one)", n)
	}
	dropped := 0
	for id := int64(1); id <= 102; id++ {
		e, err := g.store.Entry(ctx, id)
		if err != nil {
			t.Fatalf("entry %d: %v", id, err)
		}
		if e.State == store.StateDropped && e.Reason == "rate limited" {
			dropped++
		}
	}
	if dropped != 94 {
		t.Errorf("%d entries recorded as dropped (rate limited), want 94", dropped)
	}
	rows, err := g.store.ListAudit(ctx, store.AuditFilter{Kind: store.AuditRate}, 0)
	if err != nil || len(rows) != 1 || rows[0].Subject != "tg:5" || rows[0].Decision != "refused" {
		t.Errorf("audit %+v, %v", rows, err)
	}
}

// TestInProcessAuditKeep: audit.keep is applied to the store's trail — a
// row older than it is gone once the gateway started, a recent one stays
// until the clock has moved past keep, then the hourly pass drops it.
func TestInProcessAuditKeep(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	clk := tstimetest.NewFake(t0)
	ctx := context.Background()
	old := store.AuditEvent{At: t0.Add(-2 * time.Hour), Kind: store.AuditReload, Actor: "host", Subject: "old", Decision: "applied"}
	g, _, _ := inproc(t, func(s *Settings) { s.AuditKeep = time.Hour }, func(o *Options) {
		o.Clock, o.Now = clk, clk.Now
		if err := o.Store.Audit(ctx, old); err != nil {
			t.Fatal(err)
		}
	})
	subjects := func() []string {
		rows, err := g.store.ListAudit(ctx, store.AuditFilter{Kind: store.AuditReload}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Subject)
		}
		return out
	}
	if err := g.store.Audit(ctx, store.AuditEvent{At: t0, Kind: store.AuditReload, Actor: "host", Subject: "recent", Decision: "applied"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); slices.Contains(subjects(), "old"); {
		if time.Now().After(deadline) {
			t.Fatalf("the row older than audit.keep is still there: %v", subjects())
		}
		time.Sleep(time.Millisecond) // polls for the start's pass
	}
	if got := subjects(); !slices.Equal(got, []string{"recent"}) {
		t.Fatalf("after the start's pass: %v, want the recent row only", got)
	}
	// The hourly pass, on the gateway's clock.
	for deadline := time.Now().Add(10 * time.Second); len(subjects()) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no hourly pass dropped the row: %v (clock %v)", subjects(), clk.Now())
		}
		clk.Advance(2 * time.Hour)
		time.Sleep(time.Millisecond) // the pass's goroutine runs
	}
}
