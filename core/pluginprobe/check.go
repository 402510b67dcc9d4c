// Package pluginprobe starts a configured plugin outside the running
// pipeline: to check its config block the way the plugin would at its
// start (Check, with its live checks for doctor), to learn the id forms
// the plugins declare and normalise the ids the file writes (NormalizeIDs),
// or to run one instance alone (RunAlone, clawhost init's WhatsApp link).
package pluginprobe

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Check checks the config block of plugin p of cfg the way the
// plugin itself would at its start: ph starts the binary in a probe
// process, the block is decoded against the schema the plugin declares,
// and, when that succeeds, the plugin's own checks (Validate) run on the
// decoded block; with live, when the block is valid, the plugin's live
// checks too (sdk.Plugin.Probe: its credentials with its platform;
// CheckResult.Report). The diagnostics of the file are at file:line:col
// in the block, warnings included, sorted; the result holds what the
// plugin described (its id forms among its capabilities). The error says
// why the plugin could not be started or asked (nothing is known about
// the block then); p's binary must exist. ctx bounds the probe. For a
// disabled p (validate -all) the plugin's own checks only warn (see
// asWarnings).
func Check(ctx context.Context, ph *pluginhost.Supervisor, cfg *config.Config, p *config.Plugin, live bool) (hcl.Diagnostics, pluginhost.CheckResult, error) {
	var diags hcl.Diagnostics
	run := ph.Check
	if live {
		run = ph.Probe
	}
	res, err := run(ctx, settings.Plugin(cfg, p), func(s schema.Schema) []byte {
		js, d := config.DecodePluginConfig(p, s)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil
		}
		return js
	})
	if err != nil {
		return diags, res, fmt.Errorf("check plugin %s: %w", p.Name, err)
	}
	verdict := config.PluginDiagnostics(p, res.Schema, res.Verdict)
	if !p.Enabled {
		verdict = asWarnings(verdict)
	}
	return append(diags, verdict...), res, nil
}

// asWarnings turns the errors of a disabled plugin's own checks into
// warnings. Its block is checked (validate -all) while the variables that
// would enable it are unset, and those usually fill its values too (token
// = env("TOKEN", "") beside enabled = env("TOKEN", "") != ""): an empty
// token is what the environment says, not a mistake in the file. The
// schema's findings (an unknown attribute such as a typo, a wrong type, a
// missing required attribute) stay errors.
func asWarnings(diags hcl.Diagnostics) hcl.Diagnostics {
	out := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		c := *d
		if c.Severity == hcl.DiagError {
			c.Severity = hcl.DiagWarning
			c.Detail += " (The plugin is disabled: this is checked again when it is enabled, with the environment it then has.)"
		}
		out[i] = &c
	}
	return out
}
