package core

import (
	"context"
	"sync"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/hashicorp/hcl/v2"
)

// checkChanged checks, concurrently, the blocks of the enabled plugins of
// cfg that are new or changed (pluginhost.Supervisor.Changed; an unchanged
// instance is not probed, even a misconfigured one, which its restart
// checks again): each is probed as pluginprobe.Check does, bounded by its start
// timeout. It returns the diagnostics of all of them. A plugin whose
// binary is missing, or that cannot be started, adds none: the reload goes
// on and the instance shows its state as it would without the check.
func (h *Host) checkChanged(cfg *config.Config) hcl.Diagnostics {
	var changed []*config.Plugin
	for _, p := range cfg.EnabledPlugins() {
		if h.plugins.Changed(p.Name, p.Fingerprint()) {
			changed = append(changed, p)
		}
	}
	var (
		mu    sync.Mutex
		diags hcl.Diagnostics
	)
	pluginprobe.Each(changed, func(ctx context.Context, p *config.Plugin) {
		d, _, err := pluginprobe.Check(ctx, h.plugins, cfg, p, false)
		if err != nil {
			h.log.Warn("reload: could not check the plugin's config block", "instance", p.Name, "error", err)
		}
		mu.Lock()
		diags = append(diags, d...)
		mu.Unlock()
	})
	return diags
}
