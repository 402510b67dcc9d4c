package pluginprobe

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/sdk/channel"
)

// NormalizeIDs rewrites the ids written in cfg (owners, allow_from, an
// agent's chats…) to the forms their plugins declare
// (channel.Capabilities.IDForms), tells cfg which instances reach a
// sender privately (DirectToSender: where approvals may be asked), and
// returns the diagnostics of the ids that match no form. What an instance
// declares comes from running (its process's description, when it runs
// with this configuration), else from its plugin, described before it is
// configured in a probe process of ph (nil: a supervisor of its own),
// bounded by its start timeout; only the instances ids are written for
// are asked, concurrently. A plugin that cannot be asked (its binary is
// missing, it does not start) declares none: its ids are kept as written,
// and its start says why.
func NormalizeIDs(cfg *config.Config, ph *pluginhost.Supervisor, running func(instance, fingerprint string) (channel.Capabilities, bool)) hcl.Diagnostics {
	caps := map[string]channel.Capabilities{}
	var ask []*config.Plugin
	for _, name := range cfg.IDInstances() {
		p := cfg.Plugin(name)
		if p == nil || !p.Enabled {
			continue
		}
		if running != nil {
			if c, ok := running(name, p.Fingerprint()); ok {
				caps[name] = c
				continue
			}
		}
		ask = append(ask, p)
	}
	for name, res := range describeEach(cfg, ask, ph) {
		caps[name] = res.Description.Capabilities
	}
	return cfg.NormalizeIDs(caps)
}
