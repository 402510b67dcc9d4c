package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// A chat talks to the agent it is bound to (Settings.Agents) unless it
// switched with /agent to another it may use: the bound agent, and every
// agent of Settings.Switchable. The switch is kept in the metadata of the
// bound agent's session of the chat (session.Meta.Agent), so it outlives
// restarts and /new; each agent keeps its own session of the chat, so
// switching back resumes that agent's conversation.

// sessionKey is the key m's conversation runs under: keyOf's, or the
// agent the chat switched to.
func (g *Gateway) sessionKey(ctx context.Context, set Settings, m *message.Message) string {
	key := keyOf(set, m)
	if len(set.Switchable) == 0 {
		return key
	}
	if a := g.switchedTo(ctx, key); a != "" && slices.Contains(set.Switchable, a) {
		_, base := sessionkey.SplitAgent(key)
		return sessionkey.ForAgent(a, base)
	}
	return key
}

// switchedTo is the agent the chat of the bound session key switched to,
// "" when none (or its session cannot be read).
func (g *Gateway) switchedTo(ctx context.Context, bound string) string {
	s, err := g.store.Session(ctx, bound)
	if err != nil {
		return ""
	}
	return g.meta.Of(s).Agent
}

// agentChoices are the agents m's chat may talk to (the one it is bound
// to first) and the one it talks to.
func (g *Gateway) agentChoices(ctx context.Context, m *message.Message) (choices []string, active string) {
	set := g.settings()
	bound := keyOf(set, m)
	boundAgent, _ := sessionkey.SplitAgent(bound)
	choices = []string{boundAgent}
	for _, a := range set.Switchable {
		if !slices.Contains(choices, a) {
			choices = append(choices, a)
		}
	}
	active, _ = sessionkey.SplitAgent(g.sessionKey(ctx, set, m))
	return choices, active
}

// errNoSuchAgent: /agent named an agent the chat may not use.
var errNoSuchAgent = errors.New("no such agent for this chat")

// switchAgent makes agent serve m's chat from its next message on. It
// reports whether that agent already has a conversation in the chat
// (which then goes on).
func (g *Gateway) switchAgent(ctx context.Context, m *message.Message, agent string) (resumed bool, err error) {
	choices, _ := g.agentChoices(ctx, m)
	if !slices.Contains(choices, agent) {
		return false, errNoSuchAgent
	}
	bound := keyOf(g.settings(), m)
	boundAgent, base := sessionkey.SplitAgent(bound)
	to := agent
	if agent == boundAgent {
		to = ""
	}
	_, err = g.meta.Update(ctx, g.store, bound, func(meta *session.Meta) error {
		if meta.Agent == to {
			return session.ErrUnchanged
		}
		meta.Agent = to
		return nil
	})
	if err != nil && !errors.Is(err, session.ErrUnchanged) {
		return false, fmt.Errorf("switch agent: %w", err)
	}
	s, err := g.store.Session(ctx, sessionkey.ForAgent(agent, base))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("switch agent: %w", err)
	}
	return err == nil && s.ClaudeSessionID != "", nil
}

// agentPort is the command stage's port to the chat's agents.
type agentPort struct{ g *Gateway }

func (p agentPort) AgentChoices(ctx context.Context, m *message.Message) ([]string, string) {
	return p.g.agentChoices(ctx, m)
}

func (p agentPort) SwitchAgent(ctx context.Context, m *message.Message, agent string) (bool, error) {
	return p.g.switchAgent(ctx, m, agent)
}
