package core

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/clawhost/clawhost/core/reports"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/settings"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/export"
	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/internal/procpace"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
)

// statusSource feeds the admin status page.
type statusSource struct{ h *Host }

func (s *statusSource) Snapshot(ctx context.Context) admin.Snapshot {
	h := s.h
	snap := admin.Snapshot{Version: h.opts.Version, StartedAt: h.started, QueueDepth: h.gw.QueueDepth(), Errors: h.ring.List(), LastReload: h.lastReloaded(), Sandbox: h.agent.SandboxState()}
	if until, why, ok := h.gw.Paused(); ok {
		snap.Paused = &admin.Pause{Until: until, Reason: why}
	}
	for _, inst := range h.plugins.Instances() {
		st := inst.Status()
		p := admin.Plugin{Instance: st.Instance, Source: st.Source, State: string(st.State), LastError: st.LastError,
			Restarts: st.Restarts, PID: st.PID, Since: st.Since, Ready: st.State == pluginhost.StateReady, Action: st.Action,
			Message: st.Message}
		if u, ok := procmem.Read(st.PID); ok {
			p.RSS, p.Private = u.RSS, u.Private
		}
		if a := st.Attention; a != nil {
			p.Attention = &admin.Attention{Kind: string(a.Kind), Data: a.Data, ExpiresAt: a.ExpiresAt, Retry: a.Retry}
		}
		p.Kinds = st.Description.Kinds()
		snap.Plugins = append(snap.Plugins, p)
	}
	snap.Channels = admin.ChannelsOf(snap.Plugins)
	snap.Doctor = h.doctor.view()
	for _, p := range h.cfg.Plugins {
		if !p.Enabled {
			snap.Disabled = append(snap.Disabled, admin.DisabledPlugin{Instance: p.Name, Source: p.Source, Why: h.cfg.DisabledBecause(p)})
		}
	}
	sessions, total := h.gw.Sessions(ctx, 200)
	snap.SessionCount = total
	warm := h.agent.Warm()
	terminal := settings.TerminalCommands(h.cfg)
	for _, si := range sessions {
		k, _ := sessionkey.Parse(si.Key) // the store's form; a malformed key shows no agent
		_, isWarm := warm[si.Key]
		snap.Sessions = append(snap.Sessions, admin.Session{Key: si.Key, Name: si.Name, Agent: k.Agent, SessionID: si.ClaudeSessionID, Model: si.Model,
			LastActivity: si.LastMessageAt, Turns: si.Turns, InputTokens: si.Usage.InputTokens, OutputTokens: si.Usage.OutputTokens,
			CostUSD: si.CostUSD, Queued: si.Queued, Running: si.Running, LastTurn: si.LastTurn, Warm: isWarm, Card: si.Card,
			Command: terminal(k, si.ClaudeSessionID)})
	}
	for _, l := range h.attach.Attached() {
		snap.Attached = append(snap.Attached, admin.Attached{Chat: l.Chat, Session: l.Key, TerminalSession: l.SessionID, Since: l.Since, Answered: l.Turns, Waiting: l.Waiting})
	}
	for _, g := range h.gw.UnlistedGroups() {
		snap.UnlistedGroups = append(snap.UnlistedGroups, admin.UnlistedGroup{ID: g.ID, Title: g.Title, Messages: g.Messages, LastSeen: g.LastSeen})
	}
	open, recent := h.gw.Approvals()
	for _, v := range open {
		snap.Approvals = append(snap.Approvals, admin.Approval{ID: v.ID, Session: v.Key, Tool: v.Tool, Summary: v.Summary, Asker: v.Asker, Since: v.Since})
	}
	for _, r := range recent {
		outcome := "denied"
		if r.Allow {
			outcome = "allowed"
			if r.Always {
				outcome = "always allowed"
			}
		}
		snap.Decisions = append(snap.Decisions, admin.Decision{Session: r.Key, Tool: r.Tool, Summary: r.Summary, Outcome: outcome, By: r.By, At: r.At})
	}
	for key, pid := range warm {
		u, _ := procmem.Read(pid)
		k, _ := sessionkey.Parse(key)
		snap.Warm = append(snap.Warm, admin.Warm{Key: key, Agent: k.Agent, PID: pid, RSS: u.RSS, Private: u.Private})
	}
	snap.Agents = agentsView(h.cfg, snap.Warm)
	snap.WarmPool = warmPoolView(h.agent.Pool())
	snap.Host.PID = os.Getpid()
	var u procmem.Usage
	u, snap.Host.Heap = procmem.Self()
	snap.Host.RSS, snap.Host.Private = u.RSS, u.Private
	snap.Host.Procs, snap.Host.BusyProcs = procpace.Procs()
	if h.cluster != nil {
		snap.Cluster = h.cluster.Status(ctx, engineName(h.cfg))
	}
	snap.Usage, snap.Audit = reports.TeamView(ctx, h.db, h.cfg.Messages.Location(), h.log)
	if h.db != nil {
		api := h.pairingAPI("admin")
		snap.PendingPairings, _ = api.PendingPairings(ctx)
		snap.ApprovedSenders, _ = api.ApprovedSenders(ctx)
	}
	if h.agentHealth != nil {
		snap.Agent, snap.Store = h.agentHealth.View(), h.storeHealth.View()
	}
	// Every text in it — a plugin's last error (its panic), a message, an
	// approval's command — may quote a configured secret.
	h.redact.Strings(&snap)
	return snap
}

// warmPoolView is the runner's warm pool for the status page.
func warmPoolView(p runner.Pool) *admin.WarmPool {
	answer := func(l runner.Latency) admin.FirstAnswer {
		return admin.FirstAnswer{Turns: l.Turns, P50: l.P50, P90: l.P90}
	}
	return &admin.WarmPool{MaxWarm: p.MaxWarm, WarmMemory: p.WarmMemory, Memory: p.Memory, Warm: p.Warm, Measured: p.Measured,
		FirstAnswerWarm: answer(p.FirstAnswerWarm), FirstAnswerCold: answer(p.FirstAnswerCold), Spares: p.Spares, SparesAdopted: p.SparesAdopted, SpareError: p.SpareError}
}

// engineName is the storage engine's name, "sqlite" when unset.
func engineName(cfg *config.Config) string {
	if cfg.Storage.Engine == "" {
		return config.EngineSQLite
	}
	return cfg.Storage.Engine
}

// watchCluster installs this host's cluster metrics: clawhost_host_info
// always, and with a shared database the live hosts and the leases this
// host holds, read from the store at every scrape.
func (h *Host) watchCluster() {
	h.metrics.SetHostInfo(settings.HostID(h.cfg), engineName(h.cfg))
	if h.cluster != nil {
		h.metrics.WatchCluster(h.cluster.Metrics)
	}
}

// Retry is the admin endpoint's retry button and `clawhost retry`: it
// calls the plugin's Retry, mapping the plugin host's errors to the admin
// endpoint's.
func (s *statusSource) Retry(ctx context.Context, instance string) error {
	err := s.h.plugins.Retry(ctx, instance)
	switch {
	case errors.Is(err, pluginhost.ErrUnknownInstance):
		return classified{err, admin.ErrUnknownInstance}
	case errors.Is(err, pluginhost.ErrNoRetry):
		return classified{err, admin.ErrNoRetry}
	}
	return err
}

// classified is err, also matching the admin endpoint's error kind.
type classified struct{ err, kind error }

func (c classified) Error() string   { return c.err.Error() }
func (c classified) Unwrap() []error { return []error{c.err, c.kind} }

func pluginStats(h *pluginhost.Supervisor) []metrics.PluginStat {
	var out []metrics.PluginStat
	for _, inst := range h.Instances() {
		st := inst.Status()
		out = append(out, metrics.PluginStat{Instance: st.Instance, Source: st.Source, State: string(st.State), Ready: st.State == pluginhost.StateReady, Restarts: st.Restarts})
	}
	return out
}

// agentsView lists the configured agents with their warm processes.
func agentsView(cfg *config.Config, warm []admin.Warm) []admin.Agent {
	var out []admin.Agent
	for _, a := range cfg.AllAgents() {
		v := admin.Agent{ID: a.ID, Workspace: a.Workspace, Chats: a.Chats, Switchable: a.Switchable}
		for _, w := range warm {
			if w.Agent == a.ID {
				v.Warm++
			}
		}
		out = append(out, v)
	}
	return out
}

// The status page's actions.

// ExportSession writes the session's export for the page's export link.
func (s *statusSource) ExportSession(ctx context.Context, key string) (string, error) {
	k, err := sessionkey.Parse(key)
	if err != nil {
		return "", fmt.Errorf("%w: %v", admin.ErrNoExport, err)
	}
	path, err := s.h.gw.ExportSession(ctx, k)
	if errors.Is(err, export.ErrNoTranscript) {
		return "", fmt.Errorf("%w: %v", admin.ErrNoExport, err)
	}
	if err == nil {
		s.audit(store.AuditEvent{Kind: store.AuditCommand, Actor: "admin", Subject: "/export", Decision: "allowed", Detail: "the status page's export of " + key})
	}
	return path, err
}

func (s *statusSource) DecideApproval(id string, allow bool) bool {
	return s.h.gw.DecideApproval(id, allow, "the status page")
}

func (s *statusSource) StopSession(key string) bool {
	k, err := sessionkey.Parse(key) // the page's form of the key
	if err != nil {
		return false
	}
	ok := s.h.gw.StopSession(k)
	s.audit(store.AuditEvent{Kind: store.AuditCommand, Actor: "admin", Subject: "/stop", Decision: "allowed", Detail: "the status page's Stop of " + key})
	return ok
}

func (s *statusSource) RestartPlugin(instance string) error {
	err := s.h.plugins.Restart(instance)
	if err == nil {
		s.audit(store.AuditEvent{Kind: store.AuditCommand, Actor: "admin", Subject: "restart", Decision: "allowed", Detail: "the status page's Restart of plugin " + instance})
	}
	return err
}

// audit records a page action in the audit trail.
func (s *statusSource) audit(e store.AuditEvent) {
	if err := s.h.db.Audit(context.Background(), e); err != nil {
		s.h.log.Error("audit trail write failed", "kind", e.Kind, "error", err)
	}
}

func (s *statusSource) DenyPairing(ctx context.Context, code string) (bool, error) {
	return s.h.pairingAPI("admin").DenyPairing(ctx, code)
}
