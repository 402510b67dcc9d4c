package reports

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
)

// TestBudgets: the page draws the top-level budgets and each agent's own,
// with their warn_at.
func TestBudgets(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.hcl")
	src := `data_dir = "data"
budget {
  per_sender_daily_usd = 2
  per_agent_monthly_usd = 50
  warn_at = "90%"
}
agent "ops" {
  workspace = "ops"
  per_chat_daily_usd = 5
}
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Access.Owners = []string{"tg:1"} // budgets exempt owners (budget.owners unset)
	want := []admin.Budget{
		{Scope: "person", LimitUSD: 2, WarnAt: 0.9, Exempt: []string{"tg:1"}},
		{Scope: "agent", LimitUSD: 50, WarnAt: 0.9, Exempt: []string{"tg:1"}},
		{Scope: "chat", Agent: "ops", LimitUSD: 5, WarnAt: config.DefaultWarnAt, Exempt: []string{"tg:1"}},
	}
	if got := Budgets(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("Budgets\n%+v\nwant\n%+v", got, want)
	}
}
