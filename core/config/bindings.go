package config

import (
	"fmt"
	"strings"
)

// Binding is one entry of an agent's chats: the agent serves a topic or
// thread of a chat, a chat, or every chat of a plugin instance.
type Binding struct {
	Agent    string
	Instance string
	// Chat is the chat id, "*" for every chat of Instance.
	Chat string
	// Thread is the forum topic or thread id; "" for the whole chat.
	Thread string
}

// ParseBinding reads "<instance>:<chat id>", "<instance>:<chat
// id>:<thread or topic id>" or "<instance>:*".
func ParseBinding(entry string) (Binding, error) {
	parts := strings.Split(entry, ":")
	for _, p := range parts {
		if p == "" || strings.TrimSpace(p) != p {
			return Binding{}, fmt.Errorf("%q is not \"<instance>:<chat id>\", \"<instance>:<chat id>:<thread id>\" or \"<instance>:*\"", entry)
		}
	}
	switch {
	case len(parts) == 2:
		return Binding{Instance: parts[0], Chat: parts[1]}, nil
	case len(parts) == 3 && parts[1] != "*" && parts[2] != "*":
		return Binding{Instance: parts[0], Chat: parts[1], Thread: parts[2]}, nil
	}
	return Binding{}, fmt.Errorf("%q is not \"<instance>:<chat id>\", \"<instance>:<chat id>:<thread id>\" or \"<instance>:*\"", entry)
}

// String is the binding as an agent's chats entry.
func (b Binding) String() string {
	s := b.Instance + ":" + b.Chat
	if b.Thread != "" {
		s += ":" + b.Thread
	}
	return s
}

// Bindings decide which agent serves a chat: the most specific binding
// of all agents wins — a topic or thread, then its chat, then the
// instance — and a chat no agent binds talks to the default agent.
// OpenClaw's bindings resolve the same way (peer, then account, then the
// default).
type Bindings struct {
	thread   map[[3]string]string
	chat     map[[2]string]string
	instance map[string]string
}

// Bindings returns the bindings of every agent's chats. Entries that do
// not parse are left out (Load reports them).
func (c *Config) Bindings() *Bindings {
	b := &Bindings{thread: map[[3]string]string{}, chat: map[[2]string]string{}, instance: map[string]string{}}
	for _, a := range c.AllAgents() {
		for _, e := range a.Chats {
			if x, err := ParseBinding(e); err == nil {
				x.Agent = a.ID
				b.add(x)
			}
		}
	}
	return b
}

// add records x; the first binding of a place wins (Load refuses a
// second).
func (b *Bindings) add(x Binding) {
	switch {
	case x.Chat == "*":
		if _, ok := b.instance[x.Instance]; !ok {
			b.instance[x.Instance] = x.Agent
		}
	case x.Thread != "":
		k := [3]string{x.Instance, x.Chat, x.Thread}
		if _, ok := b.thread[k]; !ok {
			b.thread[k] = x.Agent
		}
	default:
		k := [2]string{x.Instance, x.Chat}
		if _, ok := b.chat[k]; !ok {
			b.chat[k] = x.Agent
		}
	}
}

// Resolve returns the agent that serves a message of chat (and thread,
// "" when none) on instance, and whether a binding chose it (false: the
// default agent, which nothing bound).
func (b *Bindings) Resolve(instance, chat, thread string) (string, bool) {
	if thread != "" {
		if a, ok := b.thread[[3]string{instance, chat, thread}]; ok {
			return a, true
		}
	}
	if a, ok := b.chat[[2]string{instance, chat}]; ok {
		return a, true
	}
	if a, ok := b.instance[instance]; ok {
		return a, true
	}
	return DefaultAgentID, false
}

// checkBindings checks every agent's chats: the form, the instance, an id
// that can match, and no place bound twice.
func checkBindings(k *checker, c *Config) {
	instances := c.instanceNames()
	bound := map[string]string{} // binding → agent
	for _, a := range c.AllAgents() {
		ak := k.block("agent")
		if a.block != nil {
			ak = k.sub(a.block.Body, fmt.Sprintf("agent %q", a.ID))
		}
		for i, e := range a.Chats {
			r := ak.elemRange("chats", i, len(a.Chats))
			x, err := ParseBinding(e)
			if err != nil {
				ak.errorf(r, "Invalid entry in "+ak.qualified("chats"), "%s, e.g. %q.", capitalize(err.Error()), exampleBinding(instances))
				continue
			}
			if c.Plugin(x.Instance) == nil {
				ak.errorf(r, "Unknown plugin instance in "+ak.qualified("chats"),
					"%q names plugin instance %q, but no plugin %q block is defined.%s", e, x.Instance, x.Instance, didYouMean(x.Instance, instances))
				continue
			}
			chats, i, x := a.Chats, i, x
			c.addIDRef(idRef{instance: x.Instance, id: x.Chat, entry: e, summary: "Entry never matches in " + ak.qualified("chats"), what: "chat", subject: r,
				set: func(canon string) { x.Chat = canon; chats[i] = x.String() }, agent: a.ID, binding: func() string { return chats[i] }})
			if other, dup := bound[a.Chats[i]]; dup {
				ak.errorf(r, "Chat bound twice",
					"%q is already bound to agent %q. A chat, topic or instance is bound to one agent; let the others reach it with switchable = true.", e, other)
				continue
			}
			bound[a.Chats[i]] = a.ID
		}
	}
}

// capitalize upper-cases the first letter of an error text made a
// sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func exampleBinding(instances []string) string {
	if len(instances) > 0 {
		return instances[0] + ":*"
	}
	return "tg:*"
}
