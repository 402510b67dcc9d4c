package core

import (
	"bytes"
	"context"
	"fmt"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/sdk/channel"
)

// normalizeIDs is the package's normalizeIDs for the host: warnings are
// logged, errors (a chat two agents bind) refuse the configuration.
func (h *Host) normalizeIDs(cfg *config.Config, ph *pluginhost.Supervisor, running func(instance, fingerprint string) (channel.Capabilities, bool)) error {
	diags := pluginprobe.NormalizeIDs(cfg, ph, running)
	if len(diags) == 0 {
		return nil
	}
	var buf bytes.Buffer
	config.FormatDiagnostics(&buf, diags, cfg.Files())
	if diags.HasErrors() {
		return fmt.Errorf("configuration: the ids written for the plugins:\n%s", buf.String())
	}
	h.log.Warn("ids in the configuration that no message can carry", "diagnostics", buf.String())
	return nil
}

// runningCapabilities are the capabilities of an instance running with
// this fingerprint, as its plugin described them when it started.
func (h *Host) runningCapabilities(instance, fingerprint string) (channel.Capabilities, bool) {
	if h.plugins.Changed(instance, fingerprint) {
		return channel.Capabilities{}, false
	}
	return h.plugins.Ports().Capabilities(instance)
}

// pipelineSettings are the pipeline's settings at the start, the ids of the
// configuration written in their plugins' forms (normalizeDeclaredIDs).
func (h *Host) pipelineSettings() (gateway.Settings, error) {
	if err := h.normalizeDeclaredIDs(); err != nil {
		return gateway.Settings{}, err
	}
	return settings.Pipeline(h.cfg)
}

// normalizeDeclaredIDs is normalizeIDs at the start, once the plugins
// started: each instance ids are written for is asked nothing more, the
// forms are what its process declared of itself before its configuration
// (pluginhost.Supervisor.Declared), waited for up to its start timeout; one
// that declared nothing (its binary missing, its first run failed) keeps its
// ids as written, and its status says why.
func (h *Host) normalizeDeclaredIDs() error {
	return h.normalizeIDs(h.cfg, nil, func(instance, _ string) (channel.Capabilities, bool) {
		p := h.cfg.Plugin(instance)
		if p == nil {
			return channel.Capabilities{}, false
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.StartTimeout.Duration())
		defer cancel()
		d, _ := h.plugins.Declared(ctx, instance)
		// Declared or not, answered: no probe process is asked.
		return d.Capabilities, true
	})
}
