package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/store"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
)

// builtins are the commands the gateway answers itself, in /help order.
// To add one: a Spec here and a case in (*Gateway).builtin.
var builtins = []command.Spec{
	{Name: "new", Help: "start a new session (text after it is its first message)"},
	{Name: "reset", Help: "same as /new"},
	{Name: "status", Help: "session, model, usage and queue"},
	{Name: "help", Help: "this list"},
	{Name: "commands", Help: "this list"},
	{Name: "stop", Help: "stop the running reply and clear the queue"},
	{Name: "whoami", Help: "your id, as access.allow_from wants it"},
	{Name: "approve", Help: "approve a pairing code (owners)", OwnerOnly: true},
	{Name: "verbose", Help: "show tool progress: /verbose on|off"},
}

// command answers a built-in or plugin command.
func (g *Gateway) command(a arrival, inv command.Invocation) {
	set := g.settings()
	if inv.OwnerOnly && !set.Access.IsOwner(&a.Message) {
		if inv.Builtin() {
			g.respond(a, "Only an owner can use /"+inv.Name+".")
		} else {
			g.respond(a, fmt.Sprintf("The /%s command is for owners only.", inv.Name))
		}
		return
	}
	if !inv.Builtin() {
		g.respond(a, g.pluginCommand(a, inv))
		return
	}
	g.respond(a, g.builtin(a, inv))
}

// builtin runs a built-in command and returns its answer.
func (g *Gateway) builtin(a arrival, inv command.Invocation) string {
	switch inv.Name {
	case "new", "reset":
		g.resetSession(a.key, &a.Message, "/"+inv.Name)
		return "New session started."
	case "status":
		return g.status(a.key)
	case "help", "commands":
		return g.commands.Help()
	case "stop":
		return g.stop(a.key)
	case "whoami":
		return fmt.Sprintf("You are %s.", a.Message.From)
	case "approve":
		return g.approve(a, inv.Args)
	case "verbose":
		return g.verbose(a.key, inv.Args)
	}
	return ""
}

func (g *Gateway) approve(a arrival, code string) string {
	if code == "" {
		return "Usage: /approve CODE"
	}
	s, err := g.store.ApprovePairing(g.ctx, code)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "Unknown pairing code."
	case errors.Is(err, store.ErrExpired):
		return "That pairing code expired."
	case err != nil:
		g.log.Error("approve failed", "error", err)
		return "Approval failed; see the gateway log."
	}
	g.log.Info("pairing approved", "sender", s.Entry(), "by", a.Message.From)
	return fmt.Sprintf("Approved %s.", s.Entry())
}

func (g *Gateway) verbose(key, args string) string {
	s, err := g.store.UpdateSession(g.ctx, key, func(s *store.Session, found bool) error {
		switch strings.ToLower(strings.TrimSpace(args)) {
		case "on", "true", "1", "yes":
			s.Verbose = true
		case "off", "false", "0", "no":
			s.Verbose = false
		default:
			s.Verbose = !s.Verbose
		}
		return nil
	})
	switch {
	case err != nil:
		return "Could not change the setting."
	case s.Verbose:
		return "Tool progress will be shown."
	}
	return "Tool progress will not be shown."
}

// stop aborts the running turn and clears the session's queue; the next
// turn's prompt says the previous one was aborted.
func (g *Gateway) stop(key string) string {
	aborted := g.queue.Abort(key, "stopped by /stop")
	n := g.queue.Clear(key, "cleared by /stop")
	switch {
	case aborted && n > 0:
		return fmt.Sprintf("Stopped. %d queued message(s) dropped.", n)
	case aborted:
		return "Stopped."
	case n > 0:
		return fmt.Sprintf("Nothing was running; %d queued message(s) dropped.", n)
	}
	return "Nothing is running."
}

// status is the answer of /status.
func (g *Gateway) status(key string) string {
	s, err := g.store.Session(g.ctx, key)
	queued, _ := g.store.CountPending(g.ctx, key)
	now := g.opts.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "Session: %s\n", key)
	if errors.Is(err, store.ErrNotFound) || s.SessionID == "" {
		b.WriteString("No conversation yet.\n")
	} else {
		model := s.Model
		if model == "" {
			model = g.settings().Turn.Model
		}
		if model == "" {
			model = "default"
		}
		fmt.Fprintf(&b, "Session id: %s\nModel: %s\nTurns: %d\nTokens: %d in, %d out (cache %d read, %d written)\nCost: $%.4f\n",
			s.SessionID, model, s.Turns, s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheCreationTokens, s.CostUSD)
		if !s.LastMessageAt.IsZero() {
			fmt.Fprintf(&b, "Last activity: %s ago\n", now.Sub(s.LastMessageAt).Round(time.Second))
		}
	}
	state := "idle"
	if g.queue.Running(key) {
		state = "running"
	}
	fmt.Fprintf(&b, "Agent: %s, %d queued\nUptime: %s", state, queued, now.Sub(g.started).Round(time.Second))
	if g.opts.Version != "" {
		fmt.Fprintf(&b, "\nclawhost %s", g.opts.Version)
	}
	return b.String()
}

// pluginCommand runs a command plugin's command and returns its answer.
func (g *Gateway) pluginCommand(a arrival, inv command.Invocation) string {
	ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
	defer cancel()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := g.opts.Ports.WaitReady(wctx, inv.Instance)
	wcancel()
	if err != nil {
		return fmt.Sprintf("The /%s command is unavailable right now (plugin %s is not ready).", inv.Name, inv.Instance)
	}
	m := &a.Message
	res, err := g.opts.Ports.Execute(ctx, inv.Instance, sdkcommand.Request{
		Command: inv.Plugin.Name, Args: inv.Args, RawText: m.Body,
		Conversation: m.Conversation(a.key), Sender: m.Sender,
	})
	if err != nil {
		g.log.Error("command failed", "command", inv.Name, "instance", inv.Instance, "error", err)
		return fmt.Sprintf("The /%s command failed.", inv.Name)
	}
	var parts []string
	for _, r := range res.Replies {
		if strings.TrimSpace(r.Text) != "" {
			parts = append(parts, r.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// RefreshCommands rebuilds the plugin commands from the ready command
// plugins and publishes the command menu (built-ins and plugin commands)
// to every ready channel that has one; call it when an instance becomes
// ready or stops.
func (g *Gateway) RefreshCommands(ctx context.Context) {
	offers, errs := g.opts.Ports.ListCommands(ctx)
	for _, err := range errs {
		g.log.Warn("listing commands failed", "error", err)
	}
	names := make([]string, 0, len(offers))
	for n := range offers {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]command.PluginCommands, len(names))
	for i, n := range names {
		list[i] = command.PluginCommands{Instance: n, Specs: offers[n]}
	}
	for _, w := range g.commands.SetPlugins(list) {
		g.log.Warn(w)
	}
	for _, err := range g.opts.Ports.PublishMenu(ctx, g.commands.Menu()) {
		g.log.Warn("publishing the command menu failed", "error", err)
	}
}

// SessionInfo is a session as the status page shows it.
type SessionInfo struct {
	store.Session
	Queued  int
	Running bool
}

// Sessions returns up to limit sessions, most recently active first, and
// the number of stored sessions.
func (g *Gateway) Sessions(ctx context.Context, limit int) ([]SessionInfo, int) {
	recent, err := g.store.RecentSessions(ctx, limit)
	if err != nil {
		g.log.Warn("listing sessions failed", "error", err)
	}
	total, err := g.store.CountSessions(ctx)
	if err != nil {
		total = len(recent)
	}
	queued, _ := g.store.PendingCounts(ctx)
	out := make([]SessionInfo, len(recent))
	for i, s := range recent {
		out[i] = SessionInfo{Session: s, Queued: queued[s.Key], Running: g.queue.Running(s.Key)}
	}
	return out, total
}

// QueueDepth is the number of messages waiting in session queues.
func (g *Gateway) QueueDepth() int { return g.queue.Depth() }
