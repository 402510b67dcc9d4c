package gateway

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

type commandRoute struct {
	instance string
	spec     command.Spec
}

// RefreshCommands rebuilds the command table from the ready command
// plugins and publishes the command menu (built-ins and plugin commands) to
// every ready channel that has one; call it when an instance becomes ready
// or stops. A plugin command named like a built-in is ignored.
func (g *Gateway) RefreshCommands(ctx context.Context) {
	if g.host == nil {
		return
	}
	table := map[string]commandRoute{}
	for _, inst := range g.host.Instances() {
		plug, desc, ok := inst.Client()
		if !ok || !desc.Command {
			continue
		}
		specs, err := plug.ListCommands(ctx)
		if err != nil {
			g.log.Warn("list commands failed", "instance", inst.Name(), "error", err)
			continue
		}
		for _, s := range specs {
			for _, n := range append([]string{s.Name}, s.Aliases...) {
				n = strings.ToLower(n)
				if slices.Contains(builtinNames, n) {
					g.log.Warn("plugin command shadows a built-in; ignored", "command", n, "instance", inst.Name())
					continue
				}
				if prev, dup := table[n]; dup {
					g.log.Warn("command offered twice; first wins", "command", n, "kept", prev.instance, "ignored", inst.Name())
					continue
				}
				table[n] = commandRoute{instance: inst.Name(), spec: s}
			}
		}
	}
	g.mu.Lock()
	g.commands = table
	g.mu.Unlock()
	g.publishMenus(ctx)
}

// publishMenus sets the command menu of every ready channel that has one.
func (g *Gateway) publishMenus(ctx context.Context) {
	menu := g.Menu()
	for _, inst := range g.host.Instances() {
		plug, desc, ok := inst.Client()
		if !ok || !desc.Channel || !desc.CommandMenu {
			continue
		}
		specs := make([]command.Spec, len(menu))
		for i, e := range menu {
			specs[i] = command.Spec{Name: e.Name, Description: e.Description}
		}
		if err := plug.SetCommands(ctx, specs); err != nil {
			g.log.Warn("publishing the command menu failed", "instance", inst.Name(), "error", err)
		}
	}
}

// Commands returns the command plugins' commands, sorted by name.
func (g *Gateway) Commands() []command.Spec {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]bool{}
	var out []command.Spec
	for _, r := range g.commands {
		if !seen[r.spec.Name] {
			seen[r.spec.Name] = true
			out = append(out, r.spec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Menu is the command menu: built-ins first, then plugin commands.
func (g *Gateway) Menu() []channel.MenuEntry {
	var out []channel.MenuEntry
	for _, n := range builtinNames {
		out = append(out, channel.MenuEntry{Name: n, Description: builtinHelp[n]})
	}
	for _, s := range g.Commands() {
		d := s.Description
		if d == "" {
			d = s.Name
		}
		out = append(out, channel.MenuEntry{Name: s.Name, Description: d})
	}
	return out
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
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, s := range recent {
		l := g.lanes[s.Key]
		out[i] = SessionInfo{Session: s, Queued: queued[s.Key], Running: l != nil && l.active != nil}
	}
	return out, total
}

// QueueDepth is the number of messages waiting in session queues.
func (g *Gateway) QueueDepth() int { return int(max(g.queued.Load(), 0)) }
