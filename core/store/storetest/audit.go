package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testAudit: the audit trail keeps every field as written (a zero At is
// the store's now), lists newest first with filters and a limit, survives
// a restart, and PruneAudit removes exactly the rows older than its
// cutoff.
func testAudit(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.open()
	t0 := e.clk.Now()
	events := []store.AuditEvent{
		{At: t0.Add(-48 * time.Hour), Kind: store.AuditPairing, Actor: "tg:1", Instance: "tg", ChatID: "1", Subject: "tg:9", Decision: "approved", Detail: "/approve"},
		{At: t0.Add(-time.Hour), Kind: store.AuditTool, Actor: "Alice", Instance: "tg", ChatID: "-100", Subject: "Bash", Decision: "allowed", Detail: "sha256:0011223344556677 ständig ✓"},
		{At: t0.Add(-time.Minute), Kind: store.AuditBudget, Actor: "host", Instance: "tg", ChatID: "-100", Subject: "per_sender_daily_usd tg:2", Decision: "refused"},
		{Kind: store.AuditReload, Actor: "host", Subject: "/etc/clawhost/config.hcl", Decision: "applied"}, // At: now
	}
	for _, ev := range events {
		if err := s.Audit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = e.open()
	list := func(f store.AuditFilter, limit int) []store.AuditEvent {
		t.Helper()
		got, err := s.ListAudit(ctx, f, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := list(store.AuditFilter{}, 0)
	if len(all) != 4 {
		t.Fatalf("%d rows: %+v", len(all), all)
	}
	for i, want := range []string{store.AuditReload, store.AuditBudget, store.AuditTool, store.AuditPairing} {
		if all[i].Kind != want {
			t.Errorf("row %d is %s, want %s (newest first)", i, all[i].Kind, want)
		}
	}
	if !all[0].At.Equal(t0) || all[0].ID <= all[3].ID || all[1].ID <= all[2].ID {
		t.Errorf("the zero At is the store's now, ids ascend by insertion: %+v", all)
	}
	tool := all[2]
	tool.ID = 0
	if tool != (store.AuditEvent{At: t0.Add(-time.Hour), Kind: store.AuditTool, Actor: "Alice", Instance: "tg", ChatID: "-100", Subject: "Bash", Decision: "allowed", Detail: "sha256:0011223344556677 ständig ✓"}) {
		t.Errorf("the tool row came back as %+v", all[2])
	}
	for _, c := range []struct {
		f    store.AuditFilter
		want int
	}{
		{store.AuditFilter{Kind: store.AuditBudget}, 1},
		{store.AuditFilter{ChatID: "-100"}, 2},
		{store.AuditFilter{Subject: "Bash"}, 1},
		{store.AuditFilter{Since: t0.Add(-2 * time.Hour)}, 3},
		{store.AuditFilter{Until: t0.Add(-time.Hour)}, 1},
		{store.AuditFilter{Since: t0.Add(-2 * time.Hour), Until: t0, ChatID: "-100"}, 2},
	} {
		got := list(c.f, 0)
		if len(got) != c.want {
			t.Errorf("%+v: %d rows, want %d", c.f, len(got), c.want)
		}
		for _, r := range got {
			if !c.f.Matches(r) {
				t.Errorf("%+v: Matches disagrees with the store on %+v", c.f, r)
			}
		}
	}
	if got := list(store.AuditFilter{}, 2); len(got) != 2 || got[0].Kind != store.AuditReload {
		t.Errorf("limit 2: %+v", got)
	}
	n, err := s.PruneAudit(ctx, t0.Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("PruneAudit: %d, %v; want the pairing row", n, err)
	}
	if got := list(store.AuditFilter{}, 0); len(got) != 3 || got[2].Kind != store.AuditTool {
		t.Errorf("after the prune: %+v", got)
	}
}
