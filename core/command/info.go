package command

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// The info group: the session's status and the command list.
var (
	cmdStatus = &builtin{name: "status", help: "session, model, usage and queue",
		run: func(h *Handler, c call) string { return h.status(c.ctx, c.key, c.who.Control) }}
	cmdHelp = &builtin{name: "help", help: "this list",
		run: func(h *Handler, _ call) string { return h.Registry.Help() }}
	cmdCommands = &builtin{name: "commands", help: "this list",
		run: func(h *Handler, _ call) string { return h.Registry.Help() }}
)

// status is the answer of /status; costs leaves out the tokens and the
// cost (a group member who does not control the session).
func (h *Handler) status(ctx context.Context, key sessionkey.Key, costs bool) string {
	s, err := h.Store.Session(ctx, key.String())
	queued, _ := h.Store.CountPending(ctx, key.String())
	now := h.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "Session: %s\n", key)
	if errors.Is(err, store.ErrNotFound) || s.SessionID == "" {
		b.WriteString("No conversation yet.\n")
	} else {
		model := s.Model
		if model == "" && h.Model != nil {
			model = h.Model(key)
		}
		if model == "" {
			model = "default"
		}
		// The id the logs show (the runner's session=) and that
		// `claude --resume` takes; the core's own session id is internal.
		if o, _ := h.Sessions.Overrides(ctx, key); o != (session.Overrides{}) {
			if o.Model != "" && o.Model != "default" {
				model = o.Model + " (set with /model)"
			}
			if o.Effort != "" {
				model += ", effort " + string(o.Effort)
			}
			if o.Mode != "" {
				model += ", permission mode " + o.Mode
			}
			if o.Queue != "" {
				model += ", queue " + string(o.Queue)
			}
		}
		fmt.Fprintf(&b, "Claude session: %s\nModel: %s\nTurns: %d\n", s.ClaudeSessionID, model, s.Turns)
		if costs {
			fmt.Fprintf(&b, "Tokens: %d in, %d out (cache %d read, %d written)\nCost: $%.4f\n",
				s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheCreationTokens, s.CostUSD)
		}
		if !s.LastMessageAt.IsZero() {
			fmt.Fprintf(&b, "Last activity: %s ago\n", now.Sub(s.LastMessageAt).Round(time.Second))
		}
	}
	if h.Approvals != nil {
		for _, l := range h.Approvals(key) {
			b.WriteString(l + "\n")
		}
	}
	if h.LastTurn != nil {
		if l := h.LastTurn(key); l != "" {
			b.WriteString("Last turn: " + l + "\n")
		}
	}
	if h.HookWork != nil {
		if ls := h.HookWork(key); len(ls) > 0 {
			b.WriteString("Hooks: " + strings.Join(ls, " · ") + "\n")
		}
	}
	state := "idle"
	if h.Sessions.Running(key) {
		state = "running"
	}
	if h.Pause != nil {
		if until, why, ok := h.Pause.Paused(); ok {
			state = "paused until " + until.Format("2006-01-02 15:04 MST") + " (" + strings.ReplaceAll(why, "_", " ") + "; an owner's /resume retries now)"
		}
	}
	if agent := key.Agent; agent != "" {
		state = agent + ", " + state
	}
	fmt.Fprintf(&b, "Agent: %s, %d queued\nUptime: %s", state, queued, now.Sub(h.Started).Round(time.Second))
	if h.Version != "" {
		fmt.Fprintf(&b, "\nclawhost %s", h.Version)
	}
	return b.String()
}
