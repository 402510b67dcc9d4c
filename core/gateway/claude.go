package gateway

import (
	"github.com/clawhost/clawhost/core/claudecmds"
)

// newClaudeCommands is the agents' claude commands: the project's under
// each agent's workspace, and what each turn's init listed; a change of
// an agent's republishes the command menus that offer them.
func newClaudeCommands(g *Gateway) *claudecmds.Catalog {
	return claudecmds.New(
		func(agent string) string { return g.turns.Profile(agent).Workspace },
		func(agent string) {
			if g.handler != nil && (chatMenuPort{g}).shows(agent) {
				g.background(func() { g.handler.PublishMenus(g.ctx) })
			}
		})
}
