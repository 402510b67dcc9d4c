package securityaudit

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// ToolGrant is one agent's tools setting: the plugin tools it reaches.
type ToolGrant struct {
	// Agent is the agent's id ("" for the default agent).
	Agent string
	// Tools are its patterns ("memory.*", "git.status") with where each is
	// written (the default agent's block for what a named one inherits).
	Tools []Setting
}

// checkPluginTools lists, for each agent granted plugin tools, which
// enabled plugins' tools it reaches: each runs in its plugin's process,
// outside the agent's sandbox, with the plugin's rights. A pattern no
// enabled plugin matches is reported too (a typo grants nothing).
func checkPluginTools(in Input, _ Machine) []Finding {
	var out []Finding
	for _, g := range in.ToolGrants {
		if len(g.Tools) == 0 {
			continue
		}
		a := Agent{ID: g.Agent}
		var reached []string
		for _, t := range g.Tools {
			plugins := in.toolPlugins(t.Value)
			if len(plugins) == 0 {
				out = append(out, Finding{Low, "agent.plugin_tools_unmatched", t.At,
					fmt.Sprintf("%s is granted %q, which names no enabled plugin's tools", a.whose(), t.Value),
					`write "<plugin instance>.<tool>" or "<plugin instance>.*" with the label of an enabled plugin block, or remove it`})
				continue
			}
			reached = append(reached, fmt.Sprintf("%s (plugin %s)", t.Value, strings.Join(plugins, ", ")))
		}
		if len(reached) > 0 {
			out = append(out, Finding{Info, "agent.plugin_tools", g.Tools[0].At,
				fmt.Sprintf("%s reaches plugin tools %s: each runs in its plugin's process, outside the sandbox, with the plugin's rights", a.whose(), strings.Join(reached, "; ")),
				"grant only the tools this agent needs, and pin those plugins (sha256)"})
		}
	}
	return out
}

// toolPlugins are the enabled plugin instances pattern may grant tools
// of, sorted.
func (in Input) toolPlugins(pattern string) []string {
	head, _, _ := strings.Cut(pattern, ".")
	var out []string
	for _, p := range in.Plugins {
		if !p.Enabled {
			continue
		}
		if ok, err := path.Match(head, p.Name); head == p.Name || (err == nil && ok) {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}
