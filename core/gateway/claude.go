package gateway

import (
	"strings"

	"github.com/clawhost/clawhost/core/claudecmds"
	"github.com/clawhost/clawhost/sdk/channel"
)

// newClaudeCommands is the agents' claude commands: the project's under
// each agent's workspace, and what each turn's init listed; a change of
// an agent's republishes the command menus that offer them.
func newClaudeCommands(g *Gateway) *claudecmds.Catalog {
	return claudecmds.New(
		func(agent string) string { return g.settings().Turn.ForAgent(agent).Workspace },
		func(agent string) {
			if g.handler != nil && g.menusFor(agent) {
				g.background(func() { g.handler.PublishMenus(g.ctx) })
			}
		})
}

// claudeMenu is an agent's claude commands as menu entries.
func (g *Gateway) claudeMenu(agent string) []channel.MenuEntry {
	cmds := g.claude.Commands(agent)
	out := make([]channel.MenuEntry, 0, len(cmds))
	for _, c := range cmds {
		out = append(out, channel.MenuEntry{Name: c.Name, Description: c.Description + " (claude)"})
	}
	return out
}

// claudeCommandAnswer is what the chat is told at once about "/cc" text
// ("" when the message goes to claude): "/cc" alone lists the agent's
// claude commands; "/cc name" for one a chat may not run says why.
func (g *Gateway) claudeCommandAnswer(agent, text string) string {
	name, _, cc, ok := claudecmds.Split(text)
	if !ok || !cc {
		return ""
	}
	if name == "" {
		cmds := g.claude.Commands(agent)
		if len(cmds) == 0 {
			return "claude lists no commands for this agent yet; they are known after its first turn. Use /cc <name> [args]."
		}
		var b strings.Builder
		b.WriteString("claude's commands (run one with /cc <name> [args], or /<name> when clawhost has no command of that name):")
		for _, c := range cmds {
			b.WriteString("\n/" + c.Name + " — " + c.Description)
		}
		return b.String()
	}
	if why := g.claude.NotInChat(agent, name); why != "" {
		return "claude's /" + name + " cannot run from a chat: " + why + "."
	}
	return ""
}
