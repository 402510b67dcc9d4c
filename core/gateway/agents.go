package gateway

import (
	"context"
	"errors"

	"github.com/clawhost/clawhost/core/agents"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/message"
)

// agentPort is the command stage's port to the chat's agents; a switch
// publishes the chat's command menu (g.sawAgent).
type agentPort struct {
	a *agents.Agents
	g *Gateway
}

func (p agentPort) AgentChoices(ctx context.Context, m *message.Message) ([]string, string) {
	return p.a.Choices(ctx, m)
}

func (p agentPort) SwitchAgent(ctx context.Context, m *message.Message, agent string) (bool, error) {
	resumed, err := p.a.Switch(ctx, m, agent)
	if err == nil && p.g != nil {
		set := p.g.settings()
		chatMenuPort{p.g}.sawAgent(set, m, p.a.Key(ctx, set.routing(), m))
	}
	return resumed, err
}

func (p agentPort) Worktree(ctx context.Context, m *message.Message) (branch, path string, ok bool) {
	w, _, ok := p.a.Worktree(ctx, m)
	return w.Branch, w.Path, ok
}

func (p agentPort) ResetWorktree(ctx context.Context, m *message.Message) (command.WorktreeReset, error) {
	w, kept, err := p.a.ResetWorktree(ctx, m)
	r := command.WorktreeReset{Branch: w.Branch, Kept: kept}
	switch {
	case errors.Is(err, agents.ErrDirty):
		r.Dirty, err = true, nil
	case errors.Is(err, agents.ErrTurnRunning):
		r.Running, err = true, nil
	case errors.Is(err, agents.ErrNoWorktree):
		r.None, err = true, nil
	}
	return r, err
}
