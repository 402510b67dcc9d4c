package gateway

import (
	"context"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/admission"
	"github.com/clawhost/clawhost/core/agents"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// newAdmission is the admission stage over the gateway's stages and store.
func newAdmission(g *Gateway) *admission.Stage {
	return admission.New(admission.Options{
		Logger: g.log, Now: g.opts.Now, Pairing: g.store, Auditor: g.store, Approvals: g.approvals, Received: g.received,
		Commands: g.commands, History: g.turns, Observer: g.obs, OwnerClaims: g.opts.OwnerClaims,
		OnOwner: func(sender string) {
			if set := g.settings(); !slices.Contains(set.Access.Owners, sender) {
				set.Access.Owners = append(slices.Clone(set.Access.Owners), sender)
				g.SetSettings(set) // the approval stage's owners too
			}
		},
		OnSteps: func(key, steps string) { g.work.set(key, "received", steps) },
	})
}

// newAgents is the agent routing over the gateway's settings and queue.
func newAgents(g *Gateway) *agents.Agents {
	return agents.New(agents.Options{Logger: g.log, Store: g.store, Meta: g.meta, Now: g.opts.Now,
		Settings: func() agents.Settings { return g.settings().routing() },
		Workspace: func(agent string) agents.Workspace {
			ts := g.turns.Profile(agent)
			return agents.Workspace{Dir: ts.Workspace, Worktrees: ts.Worktrees}
		},
		Running: func(key sessionkey.Key) bool { return g.queue.Running(key) }, // the queue is made after
		Stop:    func(key sessionkey.Key) { g.opts.Agent.Stop(key.String()) },
	})
}

// newHandler is the command stage over the gateway's stages.
func newHandler(g *Gateway) *command.Handler {
	h := &command.Handler{
		Registry: g.commands, Sessions: sessions{g}, Plugins: g.opts.Ports, Store: g.opts.Store, Logger: g.log,
		Now: g.opts.Now, Started: g.started, Version: g.opts.Version, Model: func(key sessionkey.Key) string { return g.turns.Profile(key.Agent).Model },
		Models:    func(key sessionkey.Key) []string { return g.turns.Profile(key.Agent).Models },
		Mode:      func(key sessionkey.Key) string { return g.turns.Profile(key.Agent).PermissionMode },
		Schedules: g.opts.Schedules,
		Revoker:   g.opts.Revoker,
		OnApproved: func(ctx context.Context, entry string) {
			g.PairingApproved(ctx, entry)
		},
		Pause:    pauseCommands{g},
		Exporter: exporter{g},
		Location: func() *time.Location { return g.settings().Turn.Location },
		Workdir:  g.agents.Dir,
		Detach:   g.opts.Detach,
		Agents:   agentPort{g.agents, g},
		// Only what agent.permission_modes lists is offered ("ask"
		// included): policy is the file's, never widened from a chat.
		Modes:     func(key sessionkey.Key) []string { return g.turns.Profile(key.Agent).PermissionModes },
		Approvals: func(key sessionkey.Key) []string { return approvalLines(g.approvals, g.opts.Now(), key) },
		LastTurn:  func(key sessionkey.Key) string { return g.turns.LastWait(key.String()).String() },
		HookWork:  func(key sessionkey.Key) []string { return g.work.lines(key.String()) },
		Claude:    g.claude.Menu,
		MenuChats: chatMenuPort{g}.chats,
		QueueMode: func(instance string) string { return string(g.settings().Queue.ModeFor(instance)) },
	}
	if g.opts.ChatState != nil {
		h.Terminal = terminal{g: g, state: g.opts.ChatState}
	}
	return h
}
