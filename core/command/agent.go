package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// The agents group: which agent (project) a chat talks to.
var cmdAgent = &builtin{name: "agent", help: "which agent this chat talks to: /agent [name]", needs: control,
	run: func(h *Handler, c call) string { return h.agent(c.ctx, c.m, strings.TrimSpace(c.args)) }}

// Agents is the port to a chat's agents: those it may talk to (the one it
// is bound to first) and the one it talks to, and the switch to another.
type Agents interface {
	AgentChoices(ctx context.Context, m *message.Message) (choices []string, active string)
	// SwitchAgent makes agent serve m's chat from its next message on and
	// reports whether that agent's conversation there goes on; an agent
	// not among the choices is an error.
	SwitchAgent(ctx context.Context, m *message.Message, agent string) (resumed bool, err error)
	// Worktree is the git worktree m's chat works in; ok is false when
	// its agent has none.
	Worktree(ctx context.Context, m *message.Message) (branch, path string, ok bool)
	// ResetWorktree makes it anew (not when dirty or while a reply runs).
	ResetWorktree(ctx context.Context, m *message.Message) (WorktreeReset, error)
}

// agent answers /agent: bare, the active agent and the choices; a name
// switches to that agent.
func (h *Handler) agent(ctx context.Context, m *message.Message, arg string) string {
	if h.Agents == nil || m == nil {
		return "This gateway runs one agent."
	}
	choices, active := h.Agents.AgentChoices(ctx, m)
	switch {
	case arg == "" && len(choices) < 2:
		return fmt.Sprintf("Agent: %s. This chat talks to no other agent.", active) + h.branchLine(ctx, m)
	case arg == "":
		return fmt.Sprintf("Agent: %s.\nAvailable: %s. Switch with /agent NAME.", active, strings.Join(choices, ", ")) + h.branchLine(ctx, m)
	case !slices.Contains(choices, arg):
		return fmt.Sprintf("There is no agent %q for this chat. Available: %s.", arg, strings.Join(choices, ", "))
	case arg == active:
		return fmt.Sprintf("This chat already talks to agent %s.", arg)
	}
	resumed, err := h.Agents.SwitchAgent(ctx, m, arg)
	switch {
	case errors.Is(err, context.Canceled):
		return "The switch was interrupted; try again."
	case err != nil:
		h.Logger.Error("/agent failed", "agent", arg, "error", err)
		return "The agent could not be switched; try again."
	case resumed:
		return fmt.Sprintf("Now talking to agent %s: its conversation in this chat goes on. /agent %s goes back.", arg, active)
	}
	return fmt.Sprintf("Now talking to agent %s: a new conversation. /agent %s goes back.", arg, active)
}

// agentButtons are /agent's picker: one button per agent the chat may
// switch to.
func (h *Handler) agentButtons(ctx context.Context, m *message.Message) [][]channel.Button {
	if h.Agents == nil || m == nil {
		return nil
	}
	choices, active := h.Agents.AgentChoices(ctx, m)
	if len(choices) < 2 {
		return nil
	}
	var rows [][]channel.Button
	var row []channel.Button
	for _, a := range choices {
		if a == active {
			continue
		}
		if len(row) == 3 {
			rows, row = append(rows, row), nil
		}
		row = append(row, channel.Button{ID: "/agent " + a, Label: a})
	}
	return append(rows, row)
}

// The /worktree command: owners make the chat's git worktree anew.
var cmdWorktree = &builtin{name: "worktree", help: "this chat's git worktree: /worktree [reset]", needs: control,
	run: func(h *Handler, c call) string {
		arg := strings.ToLower(strings.TrimSpace(c.args))
		if arg != "" && !c.who.Owner {
			return "Only an owner can reset the worktree."
		}
		return h.worktree(c.ctx, c.m, arg)
	}}

// WorktreeReset is what /worktree reset did.
type WorktreeReset struct {
	// Branch is the worktree's branch; Kept the old branch's new name when
	// it had commits of its own ("" when it had none).
	Branch, Kept string
	// Dirty: uncommitted changes, the worktree was kept. Running: a reply
	// runs in it, nothing was done. None: the chat's agent has no
	// worktrees.
	Dirty, Running, None bool
}

// worktree answers /worktree: bare, the chat's branch and directory;
// "reset", a new worktree from the repository's HEAD.
func (h *Handler) worktree(ctx context.Context, m *message.Message, arg string) string {
	if h.Agents == nil || m == nil {
		return "This chat's agent works without worktrees."
	}
	switch arg {
	case "":
		branch, path, ok := h.Agents.Worktree(ctx, m)
		if !ok {
			return "This chat's agent works without worktrees."
		}
		return fmt.Sprintf("Branch: %s\nWorktree: %s\n/worktree reset (owners) makes it anew from the repository's HEAD.", branch, path)
	case "reset":
	default:
		return "Usage: /worktree [reset]"
	}
	r, err := h.Agents.ResetWorktree(ctx, m)
	switch {
	case err != nil:
		h.Logger.Error("/worktree reset failed", "error", err)
		return "The worktree could not be reset; the operator's log says why."
	case r.None:
		return "This chat's agent works without worktrees."
	case r.Running:
		return "A reply is running in the worktree; /stop it or wait, then /worktree reset."
	case r.Dirty:
		return fmt.Sprintf("The worktree of %s has uncommitted changes, so it was kept as it is. Commit or discard them, then /worktree reset.", r.Branch)
	case r.Kept != "":
		return fmt.Sprintf("A new worktree on %s, from the repository's HEAD. The old branch's commits are kept on %s.", r.Branch, r.Kept)
	}
	return fmt.Sprintf("A new worktree on %s, from the repository's HEAD.", r.Branch)
}

// branchLine is /agent's line about the chat's worktree, "" without one.
func (h *Handler) branchLine(ctx context.Context, m *message.Message) string {
	if branch, _, ok := h.Agents.Worktree(ctx, m); ok {
		return "\nBranch: " + branch + " (this chat's own worktree)."
	}
	return ""
}
