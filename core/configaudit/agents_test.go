package configaudit

import (
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/pluginprobe/pluginprobetest"

	"github.com/clawhost/clawhost/core/config/configtest"
	"github.com/clawhost/clawhost/core/securityaudit"
)

// TestAuditNamedAgentTools: a named agent's own allowed_tools are audited
// too, at their line; an inherited list is reported once.
func TestAuditNamedAgentTools(t *testing.T) {
	t.Parallel()
	cfg := configtest.Load(t, `agent {
  allowed_tools = ["Bash(git log:*)"]
}
agent "ops" {
  workspace     = "./workspace"
  allowed_tools = ["Read", "Bash(make:*)"]
}
agent "docs" {
  workspace = "./workspace"
}
`)
	in := auditInput(cfg, pluginprobetest.Declarations(cfg))
	got := []string{}
	for _, f := range in.Agent.AllowedTools {
		got = append(got, "main "+f.Value+" "+strings.TrimPrefix(f.At, cfg.Path()))
	}
	for _, a := range in.Agents {
		for _, f := range a.AllowedTools {
			got = append(got, a.ID+" "+f.Value+" "+strings.TrimPrefix(f.At, cfg.Path()))
		}
	}
	if want := []string{"main Bash(git log:*) :2", "ops Read :6", "ops Bash(make:*) :6"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("allowed_tools audited: %q, want %q", got, want)
	}
	var runs []string
	for _, f := range Run(cfg, securityaudit.Machine{}, pluginprobetest.Declarations(cfg)) {
		if f.Check == "agent.allowed_tools_runs_code" {
			runs = append(runs, strings.TrimPrefix(f.Where, cfg.Path())+" "+f.Found)
		}
	}
	if len(runs) != 1 || !strings.HasPrefix(runs[0], ":6 agent \"ops\": allowed_tools has \"Bash(make:*)\"") {
		t.Errorf("code-running rules found: %q", runs)
	}
}

// TestAuditPluginTools: security audit lists which agents reach which
// plugins' tools (a named agent's own tools, or those it inherits), and
// reports a pattern that names no enabled plugin.
func TestAuditPluginTools(t *testing.T) {
	t.Parallel()
	cfg := configtest.Load(t, `agent {
  tools = ["memory.*"]
}
agent "ops" {
  workspace = "./workspace"
  tools     = ["git.status", "gti.log"]
}
agent "docs" {
  workspace = "./workspace"
}
plugin "memory" {
  source = "memory"
}
plugin "git" {
  source = "git-tool"
}
`)
	var got []string
	for _, f := range Run(cfg, securityaudit.Machine{}, pluginprobetest.Declarations(cfg)) {
		if strings.HasPrefix(f.Check, "agent.plugin_tools") {
			got = append(got, f.Check+" "+strings.TrimPrefix(f.Where, cfg.Path())+" "+f.Found)
		}
	}
	// Sorted as the report sorts them: by severity first.
	want := []string{
		`agent.plugin_tools_unmatched :6 agent "ops"'s claude is granted "gti.log", which names no enabled plugin's tools`,
		`agent.plugin_tools :2 claude reaches plugin tools memory.* (plugin memory): each runs in its plugin's process, outside the sandbox, with the plugin's rights`,
		`agent.plugin_tools :6 agent "ops"'s claude reaches plugin tools git.status (plugin git): each runs in its plugin's process, outside the sandbox, with the plugin's rights`,
		`agent.plugin_tools :2 agent "docs"'s claude reaches plugin tools memory.* (plugin memory): each runs in its plugin's process, outside the sandbox, with the plugin's rights`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plugin tool findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
