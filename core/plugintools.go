package core

import (
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/worktree"
)

// pluginToolGrants answers core/agenttools about plugin tools from the
// configuration the host runs: each agent's tools, its workspace, each
// plugin's tool_timeout. A reload swaps the configuration (set).
type pluginToolGrants struct{ cfg atomic.Pointer[config.Config] }

func (g *pluginToolGrants) set(cfg *config.Config) { g.cfg.Store(cfg) }

func (g *pluginToolGrants) agent(id string) *config.Agent {
	cfg := g.cfg.Load()
	if cfg == nil {
		return nil
	}
	if id == "" {
		id = config.DefaultAgentID
	}
	return cfg.AgentByID(id)
}

// Granted is the agent's tools patterns.
func (g *pluginToolGrants) Granted(agent string) []string {
	if a := g.agent(agent); a != nil {
		return a.Tools
	}
	return nil
}

// Workspace is the agent's workspace, absolute.
func (g *pluginToolGrants) Workspace(agent string) string {
	a := g.agent(agent)
	if a == nil {
		return ""
	}
	ws, err := filepath.Abs(a.Workspace)
	if err != nil {
		return a.Workspace
	}
	return ws
}

// Workdir is the directory of session key's chat: its worktree when the
// agent has worktrees (core/worktree.Of, as the turn makes it), else the
// workspace; "" when the key is unknown.
func (g *pluginToolGrants) Workdir(agent, key string) string {
	a := g.agent(agent)
	ws := g.Workspace(agent)
	if a == nil || !a.Worktrees {
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
	if cfg := g.cfg.Load(); cfg != nil {
		for _, p := range cfg.Plugins {
			if p.Name == instance && p.ToolTimeout != "" {
				return p.ToolTimeout.Duration()
			}
		}
	}
	return config.DefaultToolTimeout.Duration()
}
