// The host's lifecycle after New: Start (recover the journal, serve), Run
// (Start, then serve until the context ends or the cluster lease is lost),
// abort (a lost lease: stop without draining) and Shutdown (drain, stop,
// close).

package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/cluster"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/settings"
)

// Start recovers the journal and starts the admin endpoint (New started
// the plugins). Inbound messages wait for the recovery.
func (h *Host) Start(ctx context.Context) error {
	// Before any turn (recovery may start some): the tool's endpoint.
	if err := h.tools.Start(settings.AgentRunDir(h.cfg)); err != nil {
		h.log.Warn("the agent's schedule_message tool is not offered", "error", err)
	}
	if h.cluster != nil {
		jctx, cancel := context.WithTimeout(ctx, h.cluster.TTL()+30*time.Second)
		err := h.cluster.Join(jctx)
		cancel()
		if err != nil {
			return err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := h.gw.Start(rctx)
	cancel()
	if err != nil {
		return fmt.Errorf("journal recovery: %w", err)
	}
	if h.cluster != nil {
		h.cluster.Run()
	}
	h.schedules.Start(h.cfg)
	h.startMediaPruner(h.cfg)
	h.warnUnhonoured(ctx, h.cfg)
	h.metrics.WatchPlugins(func() []metrics.PluginStat { return pluginStats(h.plugins) })
	h.metrics.WatchWarm(func() int { return len(h.agent.Warm()) })
	h.watchCluster()
	if l := h.cfg.Admin.Listen; l != "" {
		// Not a silent "started" without it: the operator's view (status,
		// pairing, reload) and the supervisor's /healthz live there.
		if err := h.startAdmin(l); err != nil {
			return err
		}
	}
	h.log.Info("clawhost started", "version", h.opts.Version, "config", h.cfg.Path(), "plugins", len(h.cfg.EnabledPlugins()), "startup", time.Since(h.started))
	// Now, not beside the plugins' starts: the sandbox helper's probe start
	// (a first claude start begins it sooner).
	h.agent.StartSandboxHelpers()
	h.offerOwnerCode()
	go h.reportStart()
	return nil
}

// Run starts the host and serves until ctx ends, then shuts down (within
// 10 s).
//
// With a shared database, a lost host lease (cluster.ErrLeaseLost: the
// other hosts may run this host's work now) ends Run at once through abort
// — nothing is drained or handed back — and Run returns the error.
func (h *Host) Run(ctx context.Context) error {
	err := h.Start(ctx)
	if err == nil {
		var lost <-chan error
		if h.cluster != nil {
			lost = h.cluster.Lost()
		}
		select {
		case <-ctx.Done():
		case err = <-lost:
			h.abort()
			return err
		}
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, cluster.ErrLeaseLost) {
		// Stopped while starting (a SIGTERM during the journal's
		// recovery): what recovery had not reached stays in the journal
		// for the next start — a clean stop, not a failure.
		h.log.Info("stopped while starting; the journal keeps what was not recovered", "error", err)
		err = nil
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Shutdown(sctx)
	return err
}

// abort stops the host without draining, after its lease was lost: other
// hosts may be running its journal entries, so nothing more is written
// but what claude and the plugins are killed for. Admin endpoint, tools
// and schedules stop; claude processes and plugins are killed; the store
// is closed (a turn still finishing then fails to record, and its entry
// stays with the host that took it over).
func (h *Host) abort() {
	if h.admin != nil {
		_ = h.admin.Close(context.Background())
	}
	h.schedules.Stop()
	h.cluster.Abandon()
	done, cancel := context.WithCancel(context.Background())
	cancel() // no grace: kill at once
	h.tools.Stop(done)
	_ = h.agent.Close(done)
	h.agentHealth.Stop()
	h.plugins.Stop()
	if err := h.db.Close(); err != nil {
		h.log.Warn("closing the database", "error", err)
	}
}

// Shutdown stops the admin endpoint and intake, lets running turns and
// deliveries end (or parks them in the journal when ctx ends), stops every
// plugin and claude process, and closes the store.
func (h *Host) Shutdown(ctx context.Context) {
	close(h.quit)
	if h.admin != nil {
		_ = h.admin.Close(ctx)
		admin.RemoveRuntime(h.cfg.DataDir) // nothing answers there any more
	}
	h.schedules.Stop()
	h.media.Stop()
	for _, p := range h.agentMedia {
		p.Stop()
	}
	h.tools.Stop(ctx)
	h.gw.Close(ctx)
	if h.cluster != nil {
		// The sends this host makes for the others finish through the
		// plugins before they stop (issue 85).
		h.cluster.Drain(ctx)
	}
	h.plugins.Stop()
	if err := h.agent.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		h.log.Warn("stopping claude processes", "error", err)
	}
	h.agentHealth.Stop()
	if h.cluster != nil {
		h.cluster.Leave()
	}
	if err := h.db.Close(); err != nil {
		h.log.Warn("closing the database", "error", err)
	}
	h.log.Info("stopped")
}
