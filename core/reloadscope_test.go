package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
)

// TestNeedsRestart: a reload names what it cannot apply — a changed
// agent.command or env, storage, admin — and nothing for what it applies
// (access, budgets, the model a chat may pick) or an unchanged file.
func TestNeedsRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	load := func(src string) *config.Config {
		t.Helper()
		p := filepath.Join(dir, "config.hcl")
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, diags := config.Load(p)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return cfg
	}
	base := `agent {
  command = "/usr/bin/claude"
  env     = { A = "1" }
  models  = ["opus"]
}
access { dm_policy = "pairing" }
`
	old := load(base)
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"unchanged", base, nil},
		{"applied at once", strings.Replace(base, `models  = ["opus"]`, `models  = ["opus", "sonnet"]`, 1) + "budget { per_sender_daily_usd = 2 }\n", nil},
		{"command", strings.Replace(base, "/usr/bin/claude", "/opt/claude", 1), []string{"agent {"}},
		{"env", strings.Replace(base, `A = "1"`, `A = "2"`, 1), []string{"agent {"}},
		{"admin and log", base + "admin { listen = \"127.0.0.1:9999\" }\nlog_level = \"debug\"\n", []string{"admin { … }", "log_level, log_format"}},
	} {
		got := needsRestart(old, load(c.src))
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}
	}
}
