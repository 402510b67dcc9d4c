package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/worktree"
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
	from := boundAgent
	_, err = g.meta.Update(ctx, g.store, bound, func(meta *session.Meta) error {
		if meta.Agent == to {
			return session.ErrUnchanged
		}
		from = cmp.Or(meta.Agent, boundAgent)
		meta.Agent = to
		return nil
	})
	switch {
	case errors.Is(err, session.ErrUnchanged):
	case err != nil:
		return false, fmt.Errorf("switch agent: %w", err)
	default:
		// The agent taking over is told, in its next prompt.
		text := fmt.Sprintf("This chat switched to you (agent %q) from agent %q with /agent; what it said to %q meanwhile is not in your conversation.", agent, from, from)
		if _, err := g.meta.Update(ctx, g.store, sessionkey.ForAgent(agent, base), func(meta *session.Meta) error {
			meta.AddEvent(text, g.opts.Now())
			return nil
		}); err != nil {
			g.log.Warn("telling the agent of the switch failed", "agent", agent, "error", err)
		}
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

// errTurnRunning: /worktree reset while the chat's reply runs in it.
var errTurnRunning = errors.New("a reply is running in the worktree")

// chatWorktree is the worktree m's chat works in (with its session key),
// ok false when its agent has none.
func (g *Gateway) chatWorktree(ctx context.Context, m *message.Message) (w worktree.Worktree, key string, ok bool) {
	set := g.settings()
	key = g.sessionKey(ctx, set, m)
	agent, base := sessionkey.SplitAgent(key)
	ts := set.Turn.ForAgent(agent)
	if !ts.Worktrees {
		return w, key, false
	}
	return worktree.Of(ts.Workspace, sessionkey.Dir(base)), key, true
}

// chatDir is the directory of session key's chat: its worktree (which may
// not exist yet) and branch when its agent has worktrees, else the agent's
// workspace.
func (g *Gateway) chatDir(key string) (dir, branch string) {
	ts := g.turnSettings(key)
	if !ts.Worktrees {
		return ts.Workspace, ""
	}
	_, base := sessionkey.SplitAgent(key)
	w := worktree.Of(ts.Workspace, sessionkey.Dir(base))
	return w.Path, w.Branch
}

// resetWorktree makes m's chat's worktree anew (worktree.Reset): not while
// a reply runs in it; the chat's warm claude process, whose directory goes,
// is stopped.
func (g *Gateway) resetWorktree(ctx context.Context, m *message.Message) (worktree.Worktree, string, error) {
	w, key, ok := g.chatWorktree(ctx, m)
	if !ok {
		return w, "", errNoWorktree
	}
	if g.queue.Running(key) {
		return w, "", errTurnRunning
	}
	agent, base := sessionkey.SplitAgent(key)
	w, kept, err := worktree.Reset(ctx, g.settings().Turn.ForAgent(agent).Workspace, sessionkey.Dir(base), g.opts.Now())
	if err == nil {
		g.opts.Agent.Stop(key)
	}
	return w, kept, err
}

// errNoWorktree: /worktree in a chat whose agent has no worktrees.
var errNoWorktree = errors.New("this chat's agent works without worktrees")

func (p agentPort) Worktree(ctx context.Context, m *message.Message) (branch, path string, ok bool) {
	w, _, ok := p.g.chatWorktree(ctx, m)
	return w.Branch, w.Path, ok
}

func (p agentPort) ResetWorktree(ctx context.Context, m *message.Message) (command.WorktreeReset, error) {
	w, kept, err := p.g.resetWorktree(ctx, m)
	r := command.WorktreeReset{Branch: w.Branch, Kept: kept}
	switch {
	case errors.Is(err, worktree.ErrDirty):
		r.Dirty, err = true, nil
	case errors.Is(err, errTurnRunning):
		r.Running, err = true, nil
	case errors.Is(err, errNoWorktree):
		r.None, err = true, nil
	}
	return r, err
}
