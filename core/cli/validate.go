package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
)

// validate is `clawhost validate`: every problem of the file and of its
// plugins in one list. After the file is loaded, each enabled plugin its
// errors leave alone (Config.ProbePlugins) is looked for in plugin_dir,
// started to ask for its schema, and its config block decoded against it.
// All diagnostics are then sorted by position and printed once, with the
// count.
func validate(path string, all, live bool, stdout, stderr io.Writer) int {
	if !loadEnv(path, stderr) {
		return 1
	}
	cfg, diags := config.Load(path)
	if cfg == nil {
		config.FormatDiagnostics(stderr, diags, nil)
		return 1
	}
	caps := map[string]channel.Capabilities{}
	diags = append(diags, probePlugins(cfg, cfg.ProbePlugins(diags), live, caps, stdout)...)
	disabled := disabledPlugins(cfg, stdout, all)
	if all {
		diags = append(diags, probePlugins(cfg, disabled, false, caps, stdout)...)
	}
	// The ids written for the plugins, in the forms they declared.
	diags = append(diags, cfg.NormalizeIDs(caps)...)
	if !diags.HasErrors() {
		diags = append(diags, agentCommands(cfg)...)
		diags = append(diags, sandboxReach(cfg)...)
	}
	config.FormatDiagnostics(stderr, diags, cfg.Files())
	if diags.HasErrors() {
		return 1
	}
	fmt.Fprintf(stdout, "%s: valid (%d plugins enabled)\n", path, len(cfg.EnabledPlugins()))
	return 0
}

// disabledPlugins lists the disabled plugin blocks, each with what
// disables it as written (enabled = … at file:line), and returns those
// -all can check (a source and a path).
func disabledPlugins(cfg *config.Config, w io.Writer, all bool) []*config.Plugin {
	var out []*config.Plugin
	for _, p := range cfg.Plugins {
		if p.Enabled {
			continue
		}
		why := cfg.DisabledBecause(p)
		note := " (clawhost validate -all checks its config block too)"
		if all {
			note = " (its config block is checked as if enabled)"
		}
		fmt.Fprintf(w, "plugin %q (%s): disabled: %s%s\n", p.Name, p.Source, why, note)
		if p.Source != "" && p.Path != "" {
			out = append(out, p)
		}
	}
	return out
}

// agentCommands checks that every agent's command resolves (in PATH, or
// the file it names): the host starts without it — its agent item is not
// ready and every turn fails — so validate says it first. An agent that
// inherits the default's command is not reported again.
func agentCommands(cfg *config.Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	reported := map[string]bool{}
	for _, a := range cfg.AllAgents() {
		if reported[a.Command] {
			continue
		}
		if _, err := installpath.FindCommand(a.Command); err == nil {
			continue
		}
		reported[a.Command] = true
		path, block := []string{"agent", "command"}, "agent"
		if a.ID != cfg.Agent.ID {
			path, block = []string{"agent", a.ID, "command"}, fmt.Sprintf("agent %q", a.ID)
		}
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "claude CLI not found",
			Detail: fmt.Sprintf("%s.command is %q, which is not an executable file, in PATH (%s) or where claude's installers put it. Install it (npm install -g @anthropic-ai/claude-code, or make claude-cli in a checkout) or set command to its full path.",
				block, a.Command, os.Getenv("PATH"))}
		if attr := cfg.Attribute(path...); attr != nil {
			r := attr.Expr.Range()
			d.Subject = &r
		}
		diags = append(diags, d)
	}
	return diags
}

// sandboxReach is the host's refusal to start unsandboxed while people
// besides the owners can reach the agent (sandboxreach.Refusal), as an
// error at agent.sandbox (or the agent block): validate passing means the
// host starts on this machine.
func sandboxReach(cfg *config.Config) hcl.Diagnostics {
	err := sandboxreach.Refusal(cfg, sandboxreach.Probe(nil))
	if err == nil {
		return nil
	}
	summary, detail, _ := strings.Cut(err.Error(), ":\n")
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail}
	if attr := cfg.Attribute("agent", "sandbox"); attr != nil {
		r := attr.Expr.Range()
		d.Subject = &r
	}
	return hcl.Diagnostics{d}
}

// probeTimeout bounds the probe of one plugin: start, handshake, schema,
// the plugin's own checks.
const probeTimeout = 20 * time.Second

// probePlugins checks plugins: a missing binary gets a diagnostic with the
// nearest available source; the others are started (pluginprobe.Check) for
// their schema, their config block decoded against it, and the decoded
// block checked by the plugin's own Validate in the same process; with
// live (-probe), an enabled plugin's live checks run on a valid block too
// (liveDiagnostics). A plugin that does not start gets a diagnostic at its
// block. What each plugin declares of its ids is added to caps.
func probePlugins(cfg *config.Config, plugins []*config.Plugin, live bool, caps map[string]channel.Capabilities, stdout io.Writer) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var avail []string
	listed := false
	h := pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
	defer h.Stop()
	for _, p := range plugins {
		if _, err := os.Stat(p.Path); err != nil {
			if !listed {
				avail, _ = config.AvailableSources(cfg.PluginDir)
				listed = true
			}
			diags = append(diags, cfg.SourceDiagnostic(p, avail))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		pdiags, res, err := pluginprobe.Check(ctx, h, cfg, p, live && p.Enabled)
		cancel()
		diags = append(diags, pdiags...)
		caps[p.Name] = res.Description.Capabilities
		if res.Report != nil {
			diags = append(diags, liveDiagnostics(p, *res.Report, stdout)...)
		}
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Plugin did not start",
				Detail:   fmt.Sprintf("Plugin %q (%s) could not be started to check its config block: %v.", p.Name, p.Path, err),
				Subject:  p.DefRange.Ptr(),
			})
		}
	}
	return diags
}

// liveDiagnostics are a plugin's live checks (validate -probe): a failed
// check is an error at the plugin's block, a warning a warning, each with
// what to do; the checks that passed, and who the bot is, are printed on
// stdout.
func liveDiagnostics(p *config.Plugin, rep probe.Report, stdout io.Writer) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, c := range rep.Checks {
		switch c.Verdict {
		case probe.OK:
			fmt.Fprintf(stdout, "plugin %q (%s): %s: ok: %s\n", p.Name, p.Source, c.Name, c.Found)
		default:
			sev, summary := hcl.DiagWarning, "Live check warns: "+c.Name
			if c.Verdict == probe.Fail {
				sev, summary = hcl.DiagError, "Live check failed: "+c.Name
			}
			diags = append(diags, &hcl.Diagnostic{Severity: sev, Summary: summary, Subject: p.DefRange.Ptr(),
				Detail: fmt.Sprintf("Plugin %q (%s): %s. %s.", p.Name, p.Source, strings.TrimSuffix(c.Found, "."), strings.TrimSuffix(c.Do, "."))})
		}
	}
	if who := rep.Identity.String(); who != "" {
		fmt.Fprintf(stdout, "plugin %q (%s): the bot is %s\n", p.Name, p.Source, who)
	}
	return diags
}
