package config

import (
	"strings"
	"testing"
	"time"
)

// TestBudgetBlocks: the top-level budget, an agent's budget block, the
// same attributes written straight in an agent block, inheritance from
// the default agent, access.rate and audit.keep.
func TestBudgetBlocks(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
plugin "tg" { source = "telegram" }
access { rate = "20/min" }
budget {
  per_sender_daily_usd = 2
  per_agent_monthly_usd = 100
  warn_at = "75%"
}
audit { keep = "30d" }
agent "ops" {
  chats = ["tg:-100"]
  budget {
    per_sender_daily_usd = 5
    owners = true
  }
}
agent "docs" {
  chats = ["tg:-200"]
  per_chat_daily_usd = 1.5
  warn_at = 0.5
}
`, nil)
	if b := cfg.Budget; b.PerSenderDailyUSD != 2 || b.PerAgentMonthlyUSD != 100 || b.Warn() != 0.75 || b.HoldsOwners() {
		t.Errorf("budget %+v", b)
	}
	if n, per, ok := cfg.Access.Rate.Parse(); !ok || n != 20 || per != time.Minute {
		t.Errorf("rate %d/%v %v", n, per, ok)
	}
	if cfg.Audit.Keep.Duration() != 30*24*time.Hour {
		t.Errorf("audit.keep %v", cfg.Audit.Keep)
	}
	agents := map[string]*Agent{}
	for _, a := range cfg.AllAgents() {
		agents[a.ID] = a
	}
	if b := agents["main"].OwnBudget(); b != nil {
		t.Errorf("main sets no budget of its own: %+v", b)
	}
	if b := agents["ops"].OwnBudget(); b == nil || b.PerSenderDailyUSD != 5 || !b.HoldsOwners() {
		t.Errorf("ops %+v", b)
	}
	if b := agents["docs"].OwnBudget(); b == nil || b.PerChatDailyUSD != 1.5 || b.Warn() != 0.5 || b.PerSenderDailyUSD != 0 {
		t.Errorf("docs %+v", b)
	}
	if d := Default(); d.Budget.Any() || d.Audit.Keep != DefaultAuditKeep || d.Access.Rate != "" {
		t.Errorf("defaults: budget %+v audit %+v rate %q", d.Budget, d.Audit, d.Access.Rate)
	}
}

// TestBudgetErrors: a negative amount, a warn_at out of range, a rate
// that does not parse and a bad keep are refused at their lines.
func TestBudgetErrors(t *testing.T) {
	t.Parallel()
	_, diags := parse([]byte(`plugin "tg" { source = "telegram" }
access { rate = "20 per minute" }
budget {
  per_chat_daily_usd = -1
  warn_at = "150%"
}
audit { keep = "forever" }
agent "ops" {
  per_sender_daily_usd = -2
}
`), "/etc/clawhost/config.hcl", "/etc/clawhost", mapEnv(nil))
	var lines []string
	for _, d := range diags {
		lines = append(lines, d.Subject.String()+": "+d.Summary+": "+d.Detail)
	}
	got := strings.Join(lines, "\n")
	if len(diags) != 6 {
		t.Errorf("%d diagnostics, want 6:\n%s", len(diags), got)
	}
	for _, want := range []string{"config.hcl:2", "not a rate", "config.hcl:4", "budget.per_chat_daily_usd", "config.hcl:5", "not a share of the budget",
		"config.hcl:7", "audit.keep", "config.hcl:9"} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
}

// TestBudgetPrices: price blocks of the top-level budget, as set (the
// unset prices are filled in by core/usage.Complete); a price of 0 or below, a model
// priced twice and a price in an agent's budget are refused at their
// lines.
func TestBudgetPrices(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
plugin "tg" { source = "telegram" }
budget {
  price "claude-opus-5-5" { input = 4 }
  price "custom" {
    input = 2
    output = 8
  }
}
`, nil)
	if len(cfg.Budget.Prices) != 2 {
		t.Fatalf("prices %+v", cfg.Budget.Prices)
	}
	if p := cfg.Budget.Prices[0]; p.Model != "claude-opus-5-5" || p.Input != 4 || p.Output != 0 {
		t.Errorf("claude-opus-5-5: %+v, want input 4 and nothing else set", p)
	}
	if p := cfg.Budget.Prices[1]; p.Input != 2 || p.Output != 8 {
		t.Errorf("custom: %+v, want 2 8", p)
	}
	_, diags := parse([]byte(`plugin "tg" { source = "telegram" }
budget {
  price "a" { input = 0 }
  price "b" { input = 1 }
  price "b" {
    input = 1
    output = -1
  }
}
agent "ops" {
  workspace = "/srv/ops"
  budget {
    price "c" { input = 1 }
  }
}
`), "/etc/clawhost/config.hcl", "/etc/clawhost", mapEnv(nil))
	var lines []string
	for _, d := range diags {
		lines = append(lines, d.Subject.String()+": "+d.Summary+": "+d.Detail)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"config.hcl:3", "price \"a\"", "config.hcl:6", "Duplicate price", "config.hcl:7", "not -1", "Price in an agent's budget"} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
}
