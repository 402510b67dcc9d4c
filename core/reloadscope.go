package core

import (
	"reflect"

	"github.com/clawhost/clawhost/core/config"
)

// needsRestart names what changed from old to next that a reload does not
// apply (docs/operations.md, "Reloads and signals"): the claude runner's settings
// (command, args, env, workspace, timeout, max_warm, sandbox, …: fixed when
// the runner starts; warm processes keep the old ones too), the storage,
// the admin endpoint, data_dir, plugin_dir and the log settings. Access,
// sessions, queue, messages, budgets, audit, schedules, the heartbeat,
// plugins and the per-chat agent settings the turn stage reads (model,
// models, permission modes, approvals) apply at once.
func needsRestart(old, next *config.Config) []string {
	var out []string
	if o, n := runnerView(old), runnerView(next); !reflect.DeepEqual(o, n) {
		out = append(out, "agent { command, args, env, workspace, timeout, max_turns, idle_timeout, max_warm, max_concurrent, one_shot, sandbox, settings, run_as, system_prompt, tools, mcp_config } (the claude runner's settings)")
	}
	for _, c := range []struct {
		name     string
		old, new any
	}{
		{"storage { … }", *old.Storage, *next.Storage},
		{"admin { … }", *old.Admin, *next.Admin},
		{"data_dir", old.DataDir, next.DataDir},
		{"plugin_dir", old.PluginDir, next.PluginDir},
		{"log_level, log_format", [2]string{old.LogLevel, old.LogFormat}, [2]string{next.LogLevel, next.LogFormat}},
	} {
		if !reflect.DeepEqual(c.old, c.new) {
			out = append(out, c.name)
		}
	}
	return out
}

// runnerView is the runner's configuration of cfg without the named
// agents (a change to those refuses the reload: sameAgents).
func runnerView(cfg *config.Config) any {
	rc, err := agentConfig(cfg)
	if err != nil {
		return err.Error()
	}
	rc.Agents = nil
	return rc
}
