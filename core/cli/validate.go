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

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/pluginhost"
)

// validate is `clawhost validate`: every problem of the file and of its
// plugins in one list. After the file is loaded, each enabled plugin its
// errors leave alone (Config.ProbePlugins) is looked for in plugin_dir,
// started to ask for its schema, and its config block decoded against it.
// All diagnostics are then sorted by position and printed once, with the
// count.
func validate(path string, all bool, stdout, stderr io.Writer) int {
	if !loadEnv(path, stderr) {
		return 1
	}
	cfg, diags := config.Load(path)
	if cfg == nil {
		config.FormatDiagnostics(stderr, diags, nil)
		return 1
	}
	diags = append(diags, probePlugins(cfg, cfg.ProbePlugins(diags))...)
	disabled := disabledPlugins(cfg, stdout, all)
	if all {
		diags = append(diags, probePlugins(cfg, disabled)...)
	}
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
// besides the owners can reach the agent (core.SandboxRefusal), as an
// error at agent.sandbox (or the agent block): validate passing means the
// host starts on this machine.
func sandboxReach(cfg *config.Config) hcl.Diagnostics {
	err := core.SandboxRefusal(cfg)
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
// nearest available source; the others are started (core.CheckPlugin) for
// their schema, their config block decoded against it, and the decoded
// block checked by the plugin's own Validate in the same process. A plugin
// that does not start gets a diagnostic at its block.
func probePlugins(cfg *config.Config, plugins []*config.Plugin) hcl.Diagnostics {
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
		pdiags, err := core.CheckPlugin(ctx, h, cfg, p)
		cancel()
		diags = append(diags, pdiags...)
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
