package gateway

import (
	"github.com/clawhost/clawhost/core/claudecmds"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// newClaudeCommands is the agents' claude commands: the project's under
// each agent's workspace, and what each turn's init listed; a change of
// the default agent's republishes the command menu.
func newClaudeCommands(g *Gateway) *claudecmds.Catalog {
	return claudecmds.New(
		func(agent string) string { return g.settings().Turn.ForAgent(agent).Workspace },
		func(agent string) {
			if agent == sessionkey.DefaultAgent && g.handler != nil {
				g.background(func() { g.handler.Refresh(g.ctx) })
			}
		})
}
