package command

import (
	"context"
	"strings"

	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// MenuChat is a chat whose command menu is its agent's: clawhost's
// commands and that agent's claude commands, instead of the default
// agent's. ChatID "" is every chat of Instance (an "<instance>:*"
// binding): that instance's default menu.
type MenuChat struct {
	Instance, ChatID, Agent string
}

// PublishMenus publishes the command menus again without listing the
// plugin commands anew: call it when an agent's claude commands change.
func (h *Handler) PublishMenus(ctx context.Context) {
	h.refresh.Lock()
	defer h.refresh.Unlock()
	h.publishMenus(ctx)
}

// PublishChat publishes one chat's menu: call it when the chat switched
// agents (/agent).
func (h *Handler) PublishChat(ctx context.Context, c MenuChat) {
	h.refresh.Lock()
	defer h.refresh.Unlock()
	h.publishChat(ctx, c)
}

// publishMenus publishes the default menu (the default agent's) to every
// channel that has one, then each MenuChats chat's own.
func (h *Handler) publishMenus(ctx context.Context) {
	for _, err := range h.Plugins.PublishMenu(ctx, h.menu(sessionkey.DefaultAgent)) {
		h.Logger.Warn("publishing the command menu failed", "error", err)
	}
	if h.MenuChats == nil {
		return
	}
	for _, c := range h.MenuChats() {
		h.publishChat(ctx, c)
	}
}

func (h *Handler) publishChat(ctx context.Context, c MenuChat) {
	if err := h.Plugins.PublishChatMenu(ctx, c.Instance, channel.ChatMenu{ChatID: c.ChatID, Commands: h.menu(c.Agent)}); err != nil {
		h.Logger.Warn("publishing a chat's command menu failed", "instance", c.Instance, "chat", c.ChatID, "agent", c.Agent, "error", err)
	}
}

// menu is the command menu of agent's chats: the built-ins, the plugin
// commands, then the agent's claude commands whose names are not
// clawhost's.
func (h *Handler) menu(agent string) []channel.MenuEntry {
	menu := h.Registry.Menu()
	if h.Claude == nil {
		return menu
	}
	claude := h.Claude(agent)
	if len(claude) == 0 {
		return menu
	}
	menu = append(menu, channel.MenuEntry{Name: "cc", Description: "run claude's own command: /cc name args"})
	for _, e := range claude {
		if _, ours := h.Registry.Parse("/" + strings.ReplaceAll(e.Name, "-", "_")); ours {
			continue
		}
		if _, ours := h.Registry.Parse("/" + e.Name); ours {
			continue
		}
		menu = append(menu, e)
	}
	return menu
}
