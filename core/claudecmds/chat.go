package claudecmds

import (
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Menu is agent's claude commands as command-menu entries, marked as
// claude's.
func (c *Catalog) Menu(agent string) []channel.MenuEntry {
	cmds := c.Commands(agent)
	out := make([]channel.MenuEntry, 0, len(cmds))
	for _, cmd := range cmds {
		out = append(out, channel.MenuEntry{Name: cmd.Name, Description: cmd.Description + " (claude)"})
	}
	return out
}

// Answer is what the chat is told at once about "/cc" text ("" when the
// message goes to claude): "/cc" alone lists the agent's claude commands;
// "/cc name" for one a chat may not run says why.
func (c *Catalog) Answer(agent, text string) string {
	name, _, cc, ok := Split(text)
	if !ok || !cc {
		return ""
	}
	if name == "" {
		cmds := c.Commands(agent)
		if len(cmds) == 0 {
			return "claude lists no commands for this agent yet; they are known after its first turn. Use /cc <name> [args]."
		}
		var b strings.Builder
		b.WriteString("claude's commands (run one with /cc <name> [args], or /<name> when clawhost has no command of that name):")
		for _, cmd := range cmds {
			b.WriteString("\n/" + cmd.Name + " — " + cmd.Description)
		}
		return b.String()
	}
	if why := c.NotInChat(agent, name); why != "" {
		return "claude's /" + name + " cannot run from a chat: " + why + "."
	}
	return ""
}
