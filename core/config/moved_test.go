package config

import (
	"strings"
	"testing"
)

// No attribute has been renamed or removed yet, so the tests add entries
// of their own (before any test runs): the golden file
// testdata/diag/moved.hcl and TestMoved use them.
func init() {
	movedSettings = append(movedSettings,
		moved{path: "agent.claude_command", to: "command"},
		moved{path: "access.group.mention_only", to: "require_mention"},
		moved{path: "messages.typing_indicator", why: "The typing indicator is always on while a turn runs."},
	)
}

// TestMoved: a renamed attribute is decoded as its new name (in the agent
// {} block, an agent "<id>" block and a nested block) with a warning; a
// removed one is dropped with a warning; a block setting both names is an
// error.
func TestMoved(t *testing.T) {
	t.Parallel()
	cfg, diags := parse([]byte(`
agent { claude_command = "/opt/claude" }
agent "ops" { claude_command = "/opt/claude-ops" }
access {
  group "tg:-100" { mention_only = false }
}
messages { typing_indicator = true }
plugin "tg" { source = "telegram" }
`), "c.hcl", "/etc/clawhost", mapEnv(nil))
	if diags.HasErrors() {
		t.Fatalf("errors: %v", diags)
	}
	var warned []string
	for _, d := range diags {
		if strings.Contains(d.Summary, " was ") { // not the file's other warnings
			warned = append(warned, d.Summary)
		}
	}
	want := "agent.claude_command was renamed to agent.command|agent.claude_command was renamed to agent.command|" +
		"access.group.mention_only was renamed to access.group.require_mention|messages.typing_indicator was removed"
	if strings.Join(warned, "|") != want {
		t.Errorf("warnings %q\nwant     %q", strings.Join(warned, "|"), want)
	}
	if cfg.Agent.Command != "/opt/claude" || len(cfg.Agents) != 1 || cfg.Agents[0].Command != "/opt/claude-ops" {
		t.Errorf("commands %q, %+v", cfg.Agent.Command, cfg.Agents)
	}
	if len(cfg.Access.GroupRules) != 1 || cfg.Access.GroupRules[0].RequireMention == nil || *cfg.Access.GroupRules[0].RequireMention {
		t.Errorf("group rules %+v", cfg.Access.GroupRules)
	}

	_, diags = parse([]byte(`agent {
  claude_command = "/opt/a"
  command        = "/opt/b"
}
`), "c.hcl", "/etc/clawhost", mapEnv(nil))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "new name: delete claude_command") {
		t.Errorf("both names set: %v", diags)
	}
}
