package command

import (
	"cmp"
	"slices"
	"sync"

	"github.com/clawhost/clawhost/core/sessionkey"
)

// chatRef is a chat of an instance.
type chatRef struct{ instance, chat string }

// ChatMenus are the chats whose agent is not the one they are bound to
// (they switched with /agent), for their command menus. They are learnt
// when a chat switches and from each message (a switch made before a
// restart is learnt from the chat's next message; the platform keeps the
// menu set before). Safe for concurrent use.
type ChatMenus struct {
	mu       sync.Mutex
	switched map[chatRef]string
}

// Saw records that a message of chat (thread "" for the chat itself) on
// instance runs under agent while the chat is bound to bound, and reports
// whether the chat's menu must be published anew: it switched to another
// agent than the one it was known to run under. A thread or topic has no
// menu of its own.
func (c *ChatMenus) Saw(instance, chat, thread, agent, bound string) bool {
	if thread != "" || chat == "" {
		return false
	}
	ref := chatRef{instance, chat}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known := c.switched[ref]
	if known && old == agent || !known && agent == bound {
		return false
	}
	if c.switched == nil {
		c.switched = map[chatRef]string{}
	}
	c.switched[ref] = agent
	return true
}

func (c *ChatMenus) snapshot() map[chatRef]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[chatRef]string, len(c.switched))
	for k, v := range c.switched {
		out[k] = v
	}
	return out
}

// menuChats decides which chats get a command menu of their own, and
// whose. Of the bindings (bound, agent.chats): "<instance>:*" to an agent
// other than the default (ChatID "") sets that instance's default menu to
// its agent's; a chat bound to an agent gets its agent's menu unless the
// instance's default menu is that agent's already. A chat that switched
// agents gets the agent it switched to (even the default agent's: a menu
// set for it before must be replaced). Sorted by instance and chat, an
// instance's own default menu first.
func menuChats(bound []MenuChat, switched map[chatRef]string) []MenuChat {
	instance := map[string]string{} // instance → the agent of its "*"
	for _, b := range bound {
		if b.ChatID == "" {
			if _, ok := instance[b.Instance]; !ok {
				instance[b.Instance] = b.Agent
			}
		}
	}
	var out []MenuChat
	seen := map[chatRef]bool{}
	for _, b := range bound {
		ref := chatRef{b.Instance, b.ChatID}
		if seen[ref] {
			continue
		}
		seen[ref] = true
		to, sw := switched[ref]
		switch {
		case b.ChatID == "":
			if b.Agent == sessionkey.DefaultAgent {
				continue // the default menu is the default agent's
			}
		case sw:
			b.Agent = to
		case b.Agent == cmp.Or(instance[b.Instance], sessionkey.DefaultAgent):
			continue // the instance's default menu is this agent's
		}
		out = append(out, b)
	}
	for ref, agent := range switched {
		if !seen[ref] {
			out = append(out, MenuChat{Instance: ref.instance, ChatID: ref.chat, Agent: agent})
		}
	}
	slices.SortFunc(out, func(a, b MenuChat) int {
		return cmp.Or(cmp.Compare(a.Instance, b.Instance), cmp.Compare(a.ChatID, b.ChatID))
	})
	return out
}

// Chats are the chats with a menu of their own now, given the bindings
// (bound, agent.chats) and the switches seen (menuChats).
func (c *ChatMenus) Chats(bound []MenuChat) []MenuChat { return menuChats(bound, c.snapshot()) }
