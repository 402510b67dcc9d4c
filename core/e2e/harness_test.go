package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/fakeclaude"
)

// TestHostHCL: what the builder writes is a file the daemon's own loader
// accepts, with each setting where the test put it — the fake claude's
// defaults in the default agent, a labelled agent inheriting them, the
// blocks, a plugin's host settings and config, an expression as written.
func TestHostHCL(t *testing.T) {
	dir := t.TempDir()
	h := Host{
		Dir:       dir,
		PluginDir: dir,
		Agent:     Agent{Env: map[string]string{"EXTRA": "1"}, Raw: "max_warm = 3"},
		Agents:    []Agent{{ID: "ops", Attrs: Attrs{"workspace": "./ops", "chats": []string{"lo:c1"}}}},
		Access:    Attrs{"dm_policy": "allowlist", "allow_from": []string{"lo:u1", "lo:u2"}},
		Admin:     Attrs{"listen": ""},
		Messages:  Attrs{"streaming": "off", "text_limit": 160},
		Plugins: []Plugin{
			{Name: "lo", Source: "loopback", Attrs: Attrs{"enabled": false, "env": map[string]string{"K": "v w"}},
				Config: Attrs{"addr_file": "a.addr", "pacing": Attrs{"min": "0s"}}},
			{Name: "web", Source: "webchat", Config: Attrs{"listen": Expr(`"127.0.0.1:${1+1}"`)}},
		},
	}
	if err := os.MkdirAll(filepath.Join(dir, "ops"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := h.Write(t)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config.hcl: %v %v", fi, err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		b, _ := os.ReadFile(path)
		t.Fatalf("the loader refused the builder's file: %v\n%s", diags, b)
	}
	exe, _ := os.Executable()
	a := cfg.Agent
	if a.Command != exe || a.Env[fakeclaude.EnvVar] != "1" || a.Env["EXTRA"] != "1" || a.Timeout != "30s" || a.MaxWarm != 3 ||
		a.Workspace != filepath.Join(dir, "workspace") {
		t.Errorf("default agent: command %q env %v timeout %q max_warm %d workspace %q", a.Command, a.Env, a.Timeout, a.MaxWarm, a.Workspace)
	}
	if len(cfg.Agents) != 1 || cfg.Agents[0].ID != "ops" || cfg.Agents[0].Command != exe || cfg.Agents[0].Workspace != filepath.Join(dir, "ops") {
		t.Errorf("agents: %+v", cfg.Agents)
	}
	if cfg.Access.DMPolicy != "allowlist" || strings.Join(cfg.Access.AllowFrom, ",") != "lo:u1,lo:u2" || cfg.Admin.Listen != "" ||
		cfg.Messages.Streaming != "off" || cfg.Messages.TextLimit != 160 || cfg.LogLevel != "debug" {
		t.Errorf("blocks: access %+v admin %+v messages %+v log %q", cfg.Access, cfg.Admin, cfg.Messages, cfg.LogLevel)
	}
	if len(cfg.Plugins) != 2 || cfg.Plugins[0].Enabled || cfg.Plugins[0].Env["K"] != "v w" || cfg.Plugins[1].Source != "webchat" {
		t.Errorf("plugins: %+v", cfg.Plugins)
	}
	if src := h.HCL(t); !strings.Contains(src, `listen = "127.0.0.1:${1+1}"`) {
		t.Errorf("the expression was not written as it is:\n%s", src)
	}
}
