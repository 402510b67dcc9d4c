package doctor

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/sdk/probe"
)

// probeTimeout bounds the probe of one plugin beyond its start timeout:
// the plugin's own checks and its calls to its platform.
const probeTimeout = 30 * time.Second

// doctorChannels runs the live checks (sdk.Plugin.Probe) of every enabled
// plugin that offers them, each in a probe process of its own started by
// ph (nil: a supervisor of its own): the plugin asks its platform whether
// it takes the credentials of the config block and who the bot is, or
// reads its own state (a linked device). Nothing is sent to a chat, and a
// running instance is not touched. Each of the plugin's checks is one
// doctor check; a plugin without live checks adds none, a block that is
// not valid one failure (validate says where).
func doctorChannels(ctx context.Context, cfg *config.Config, ph *pluginhost.Supervisor) []Check {
	if ph == nil {
		ph = pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
		defer ph.Stop()
	}
	var out []Check
	for _, p := range cfg.EnabledPlugins() {
		if _, err := os.Stat(p.Path); err != nil {
			continue // doctorBinaries reports it
		}
		name := fmt.Sprintf("plugin %q (%s)", p.Name, p.Source)
		pctx, cancel := context.WithTimeout(ctx, p.StartTimeout.Duration()+probeTimeout)
		diags, res, err := pluginprobe.Check(pctx, ph, cfg, p, true)
		cancel()
		rep := res.Report
		switch {
		case err != nil:
			out = append(out, Check{Name: name, Verdict: VerdictWarn, Found: "could not probe the plugin: " + err.Error(), Do: "run clawhost validate"})
			continue
		case diags.HasErrors():
			out = append(out, Check{Name: name, Verdict: VerdictFail, Found: "its config block is not valid", Do: "run clawhost validate, which says where"})
			continue
		case rep == nil:
			continue
		}
		out = append(out, probeChecks(name, *rep)...)
	}
	return out
}

// probeChecks are a plugin's live checks as doctor checks named after the
// instance; the first says who the bot is when the plugin learned it.
func probeChecks(name string, rep probe.Report) []Check {
	out := make([]Check, 0, len(rep.Checks))
	for i, c := range rep.Checks {
		found := c.Found
		if who := rep.Identity.String(); i == 0 && who != "" {
			found += " (" + who + ")"
		}
		d := Check{Name: name + ": " + c.Name, Verdict: string(c.Verdict), Found: found}
		if c.Verdict != probe.OK {
			d.Do = c.Do
		}
		out = append(out, d)
	}
	return out
}
