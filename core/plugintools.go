package core

import (
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/core/worktree"
)

// pluginToolGrants answers core/agenttools about plugin tools from the
// configuration the host runs: each agent's tools and workspace (its
// settings.Profile), each plugin's tool_timeout. A reload swaps the
// configuration (set).
type pluginToolGrants struct{ cur atomic.Pointer[toolConfig] }

// toolConfig is a configuration as the grants read it.
type toolConfig struct {
	cfg    *config.Config
	agents map[string]settings.Profile
}

func (g *pluginToolGrants) set(cfg *config.Config) {
	// A run_as user that does not resolve refused the configuration
	// before it got here (settings.Runner); the profiles are whole anyway.
	profiles, _ := settings.Agents(cfg)
	tc := &toolConfig{cfg: cfg, agents: map[string]settings.Profile{}}
	for _, p := range profiles {
		tc.agents[p.ID] = p
	}
	g.cur.Store(tc)
}

func (g *pluginToolGrants) agent(id string) (settings.Profile, bool) {
	tc := g.cur.Load()
	if tc == nil {
		return settings.Profile{}, false
	}
	if id == "" {
		id = config.DefaultAgentID
	}
	p, ok := tc.agents[id]
	return p, ok
}

// Granted is the agent's tools patterns.
func (g *pluginToolGrants) Granted(agent string) []string {
	if p, ok := g.agent(agent); ok {
		return p.Tools
	}
	return nil
}

// Workspace is the agent's workspace, absolute.
func (g *pluginToolGrants) Workspace(agent string) string {
	p, ok := g.agent(agent)
	if !ok {
		return ""
	}
	ws, err := filepath.Abs(p.Runner.Workspace)
	if err != nil {
		return p.Runner.Workspace
	}
	return ws
}

// Workdir is the directory of session key's chat: its worktree when the
// agent has worktrees (core/worktree.Of, as the turn makes it), else the
// workspace; "" when the key is unknown.
func (g *pluginToolGrants) Workdir(agent, key string) string {
	p, ok := g.agent(agent)
	ws := g.Workspace(agent)
	if !ok || !p.Turn.Worktrees {
		return ws
	}
	if key == "" {
		return ""
	}
	k, err := sessionkey.Parse(key) // the tool call's conversation, in the wire's form
	if err != nil {
		k = sessionkey.Key{Chat: key}
	}
	return worktree.Of(ws, k.Dir()).Path
}

// Timeout is the plugin instance's tool_timeout.
func (g *pluginToolGrants) Timeout(instance string) time.Duration {
	if tc := g.cur.Load(); tc != nil {
		for _, p := range tc.cfg.Plugins {
			if p.Name == instance && p.ToolTimeout != "" {
				return p.ToolTimeout.Duration()
			}
		}
	}
	return config.DefaultToolTimeout.Duration()
}
