package core

import (
	"bytes"
	"fmt"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/pluginprobe"
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
