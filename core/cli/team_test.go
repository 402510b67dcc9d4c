package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// TestTeamFlagErrors: clawhost usage and audit refuse bad flags with exit
// 2 and say what is wrong, before they read a configuration.
func TestTeamFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"usage", "-by", "x"}, `clawhost usage: -by "x" is not one of person, chat, agent, day`},
		{[]string{"usage", "-since", "bogus"}, `clawhost usage: -since "bogus" is not a duration (24h, 7d, 30d)`},
		{[]string{"usage", "-since", "-3d"}, `-since "-3d" is not a duration`},
		{[]string{"audit", "-since", "soon"}, `clawhost audit: -since "soon" is not a duration`},
		{[]string{"audit", "extra"}, `clawhost audit: unexpected argument "extra"`},
		{[]string{"usage", "-bogus"}, "usage: clawhost usage [-config FILE] [-since 7d] [-by person|chat|agent|day] [-json]"},
		{[]string{"audit", "-bogus"}, "usage: clawhost audit [-config FILE] [-since 7d] [-kind KIND] [-json]"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			if code := run(append(tc.args, "-config", filepath.Join(t.TempDir(), "none.hcl")), &out, &errb); code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr %q, want %q", errb.String(), tc.want)
			}
		})
	}
}

// TestTeamReadsTheDatabase: with the host stopped (no admin endpoint to
// ask), clawhost usage and audit read the SQLite database in data_dir.
func TestTeamReadsTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "data_dir = %q\nadmin {\n  listen = \"\"\n}\n", data), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, u := range []store.TurnUsage{
		{At: now.Add(-time.Hour), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:5", InputTokens: 100, CostUSD: 0.25, Outcome: "ok"},
		{At: now.Add(-2 * time.Hour), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:5", InputTokens: 300, CostUSD: 0.5, Outcome: "aborted"},
		{At: now.Add(-time.Hour), Agent: "ops", Instance: "tg", ChatID: "6", Sender: "tg:6", InputTokens: 50, CostUSD: 1, Outcome: "ok"},
		{At: now.Add(-10 * 24 * time.Hour), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:5", CostUSD: 100, Outcome: "ok"},
	} {
		res, err := db.Accept(ctx, store.Inbound{Instance: "tg", ChatID: u.ChatID, MessageID: fmt.Sprint(i), Message: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Begin(ctx, "k", res.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordReply(ctx, store.Reply{JournalID: res.ID, Text: "r", Chunks: []string{"r"}, Usage: &u}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []store.AuditEvent{
		{At: now.Add(-time.Hour), Kind: store.AuditPairing, Actor: "tg:9", Instance: "tg", Subject: "tg:5", Decision: "approved"},
		{At: now.Add(-time.Minute), Kind: store.AuditRevoke, Actor: "tg:9", Instance: "tg", Subject: "tg:5", Decision: "revoked"},
	} {
		if err := db.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	cli := func(args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append(args, "-config", cfg), &out, &errb); code != 0 {
			t.Fatalf("clawhost %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
		return out.Bytes()
	}
	var ledger struct {
		By   string `json:"by"`
		Rows []struct {
			Key         string  `json:"key"`
			Turns       int     `json:"turns"`
			InputTokens int64   `json:"input_tokens"`
			CostUSD     float64 `json:"cost_usd"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(cli("usage", "-by", "person", "-json"), &ledger); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range ledger.Rows {
		got[r.Key] = fmt.Sprintf("%d turns, %d in, $%.2f", r.Turns, r.InputTokens, r.CostUSD)
	}
	if ledger.By != "person" || len(got) != 2 || got["tg:5"] != "2 turns, 400 in, $0.75" || got["tg:6"] != "1 turns, 50 in, $1.00" {
		t.Errorf("usage -by person over 7 days: %v", got)
	}
	if out := string(cli("usage", "-by", "agent", "-since", "30d")); !strings.Contains(out, "main") || !strings.Contains(out, "ops") || !strings.Contains(out, "$100.75") {
		t.Errorf("usage -by agent -since 30d:\n%s", out)
	}
	var trail []struct{ Kind, Actor, Subject, Decision string }
	if err := json.Unmarshal(cli("audit", "-json"), &trail); err != nil {
		t.Fatal(err)
	}
	if len(trail) != 2 || trail[0].Kind != "revoke" || trail[0].Decision != "revoked" || trail[1].Kind != "pairing" || trail[1].Actor != "tg:9" {
		t.Errorf("audit -json, newest first: %+v", trail)
	}
	if out := string(cli("audit", "-kind", "pairing", "-since", "2h")); !strings.Contains(out, "approved") || strings.Contains(out, "revoked") {
		t.Errorf("audit -kind pairing:\n%s", out)
	}
}

// TestLoadAdminDisabled: the commands that go through the admin endpoint
// refuse a configuration with admin { listen = "" }, saying how to enable
// it (and what else would do, where something would).
func TestLoadAdminDisabled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "data_dir = %q\nadmin {\n  listen = \"\"\n}\n", filepath.Join(dir, "data")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, orElse string }{{"status", ""}, {"reload", ", or send the process SIGHUP"}} {
		var w bytes.Buffer
		if got, ok := loadAdmin(c.name, hostAt{config: cfg}, &w, c.orElse); ok || got != nil {
			t.Errorf("%s: loaded %v with the admin endpoint disabled", c.name, got)
		}
		want := "clawhost " + c.name + ": the admin endpoint is disabled; enable it: admin { listen = \"127.0.0.1:"
		if !strings.HasPrefix(w.String(), want) || !strings.HasSuffix(w.String(), "}"+c.orElse+"\n") {
			t.Errorf("%s: %q, want %q…%q", c.name, w.String(), want, c.orElse)
		}
	}
}
