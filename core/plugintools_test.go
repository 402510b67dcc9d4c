package core

import (
	"github.com/clawhost/clawhost/core/config/configtest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/worktree"
)

// TestPluginToolGrants: the tools endpoint reads each agent's tools (a
// named agent inherits the default's unless it sets its own), its
// workspace (absolute) and each plugin's tool_timeout (default 30s) from
// the configuration it was last given: a reload's new grants apply at once.
func TestPluginToolGrants(t *testing.T) {
	t.Parallel()
	cfg := configtest.Load(t, `agent {
  tools = ["memory.*"]
}
agent "ops" {
  workspace = "./ops"
  tools     = ["git.status"]
}
agent "docs" {
  workspace = "./docs"
}
plugin "memory" {
  source       = "memory"
  tool_timeout = "5s"
}
plugin "git" {
  source = "git-tool"
}
`)
	// docs has worktrees (set here: the load would want a repository).
	cfg.AgentByID("docs").Worktrees = true
	g := &pluginToolGrants{}
	g.set(cfg)
	for agent, want := range map[string][]string{"main": {"memory.*"}, "": {"memory.*"}, "ops": {"git.status"}, "docs": {"memory.*"}, "nobody": nil} {
		if got := g.Granted(agent); !slices.Equal(got, want) {
			t.Errorf("Granted(%q) = %q, want %q", agent, got, want)
		}
	}
	if ws := g.Workspace("ops"); !filepath.IsAbs(ws) || filepath.Base(ws) != "ops" {
		t.Errorf("Workspace(ops) = %q", ws)
	}
	// The chat's directory: the workspace, or with worktrees the chat's
	// worktree as the turn makes it.
	if wd := g.Workdir("ops", "agent:ops:tg:direct:5"); wd != g.Workspace("ops") {
		t.Errorf("Workdir(ops) = %q, want the workspace", wd)
	}
	if wd, want := g.Workdir("docs", "agent:docs:tg:direct:5"), worktree.Of(g.Workspace("docs"), sessionkey.Dir("tg:direct:5")).Path; wd != want || wd == g.Workspace("docs") {
		t.Errorf("Workdir(docs) = %q, want %q", wd, want)
	}
	if g.Timeout("memory") != 5*time.Second || g.Timeout("git") != 30*time.Second {
		t.Errorf("timeouts %v %v", g.Timeout("memory"), g.Timeout("git"))
	}
	g.set(configtest.Load(t, `agent {
  tools = []
}
`))
	if got := g.Granted("main"); len(got) != 0 {
		t.Errorf("after the reload main is granted %q", got)
	}
}
