package settings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
)

// TestReloadChanges: a reload names exactly the settings that changed, and of
// them what waits for a restart — a changed agent.workspace, storage, admin,
// log_level — but not what it applies (access, budgets, the model, the prompt,
// env); an unchanged file names nothing.
func TestReloadChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"workspace", "ws2"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	load := func(src string) *config.Config {
		t.Helper()
		return loadConfig(t, filepath.Join(dir, "config.hcl"), src)
	}
	base := `agent {
  command = "/usr/bin/claude"
  env     = { A = "1" }
  models  = ["opus"]
  model   = "opus"
}
access { dm_policy = "pairing" }
plugin "tg" {
  source  = "telegram"
  enabled = false
}
schedule "daily" {
  cron   = "0 9 * * *"
  chat   = "tg:1001"
  prompt = "hi"
}
`
	old := load(base)
	for _, c := range []struct {
		name, src        string
		changed, restart []string
	}{
		{"unchanged", base, nil, nil},
		{"model", strings.Replace(base, `model   = "opus"`, `model   = "sonnet"`, 1), []string{"agent.model"}, nil},
		{"applied at once", strings.Replace(base, `models  = ["opus"]`, `models  = ["opus", "sonnet"]`, 1) + "budget { per_sender_daily_usd = 2 }\n",
			[]string{"agent.models", "budget.per_sender_daily_usd"}, nil},
		{"env", strings.Replace(base, `A = "1"`, `A = "2"`, 1), []string{"agent.env.A"}, nil},
		{"claude's config dir", strings.Replace(base, `A = "1"`, `A = "1", CLAUDE_CONFIG_DIR = "/x"`, 1), []string{"agent.env.CLAUDE_CONFIG_DIR"}, []string{"agent.env.CLAUDE_CONFIG_DIR"}},
		{"command", strings.Replace(base, "/usr/bin/claude", "/opt/claude", 1), []string{"agent.command"}, []string{"agent.command"}},
		{"workspace and prompt", strings.Replace(base, `model   = "opus"`, "model = \"opus\"\n  workspace = \"./ws2\"\n  system_prompt = \"be brief\"", 1),
			[]string{"agent.workspace", "agent.system_prompt"}, []string{"agent.workspace"}},
		{"schedule", strings.Replace(base, `prompt = "hi"`, `prompt = "hello"`, 1), []string{`schedule "daily"`}, nil},
		{"admin and log", base + "admin { listen = \"127.0.0.1:9999\" }\nlog_level = \"debug\"\n",
			[]string{"log_level", "admin.listen"}, []string{"log_level", "admin.listen"}},
	} {
		changed, restart := Changes(old, load(c.src))
		if !sameSet(changed, c.changed) || !sameSet(restart, c.restart) {
			t.Errorf("%s: changed %q restart %q, want %q and %q", c.name, changed, restart, c.changed, c.restart)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
