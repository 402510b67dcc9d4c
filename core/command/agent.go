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
		return fmt.Sprintf("Agent: %s. This chat talks to no other agent.", active)
	case arg == "":
		return fmt.Sprintf("Agent: %s.\nAvailable: %s. Switch with /agent NAME.", active, strings.Join(choices, ", "))
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
