package gateway

import (
	"slices"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// MenuChat is a chat (ChatID "": every chat of an instance) whose command
// menu is an agent's other than the default menu (command.MenuChat).
type MenuChat = command.MenuChat

// chatMenuPort is the gateway's side of the per-chat command menus: which
// chats have one now, a chat seen under an agent, whose commands are shown.
type chatMenuPort struct{ g *Gateway }

// chats are the chats with a menu of their own now.
func (p chatMenuPort) chats() []MenuChat {
	return p.g.menus.Chats(p.g.settings().MenuChats)
}

// sawAgent notes the agent m's conversation runs under (key's) and, when
// the chat's menu changes by it, publishes that menu.
func (p chatMenuPort) sawAgent(set Settings, m *message.Message, key sessionkey.Key) {
	g := p.g
	bound := sessionkey.DefaultAgent
	if set.Agents != nil {
		bound, _ = set.Agents.Resolve(m.Instance, m.ChatID, "")
	}
	if !g.menus.Saw(m.Instance, m.ChatID, m.ThreadID, key.Agent, bound) || g.handler == nil {
		return
	}
	c := MenuChat{Instance: m.Instance, ChatID: m.ChatID, Agent: key.Agent}
	g.background(func() { g.handler.PublishChat(g.ctx, c) })
}

// shows reports whether agent's claude commands are in a menu: the
// default agent's are in the default one; another's in the chats it
// serves.
func (p chatMenuPort) shows(agent string) bool {
	return agent == sessionkey.DefaultAgent || slices.ContainsFunc(p.chats(), func(c MenuChat) bool { return c.Agent == agent })
}
