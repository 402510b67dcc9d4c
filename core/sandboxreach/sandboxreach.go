// Package sandboxreach is the rule that claude never runs unsandboxed for
// people besides the owners: who can reach the agent through the enabled
// channels (Strangers), and the start's and a reload's refusal when
// bubblewrap does not work (Check, Refusal).
package sandboxreach

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/bubblewrap"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/settings"
)

// Declare tells the rule what the enabled plugins of a configuration
// declare of themselves (pluginprobe.Declared: whether each is a channel,
// the address it serves people on). Probe asks them; tests give a table.
type Declare func(cfg *config.Config) map[string]pluginprobe.Declared

// Probe is the Declare that asks the plugins, in probe processes of ph
// (nil: a supervisor of its own).
func Probe(ph *pluginhost.Supervisor) Declare {
	return func(cfg *config.Config) map[string]pluginprobe.Declared {
		return pluginprobe.Declarations(cfg, cfg.EnabledPlugins(), ph)
	}
}

// reachChannels are cfg's enabled plugin instances people may write
// through, as declared says: a plugin that declares it is no channel (a
// command, hooks) is left out, one that serves people on a loopback
// address is marked local (only who can log in here reaches it). A plugin
// that declared nothing (it could not be asked) is a channel reachable from
// anywhere.
func reachChannels(cfg *config.Config, declared map[string]pluginprobe.Declared) []access.Channel {
	var out []access.Channel
	for _, p := range cfg.EnabledPlugins() {
		d, known := declared[p.Name]
		if known && !d.Channel {
			continue
		}
		c := access.Channel{Instance: p.Name}
		if addr, _ := d.ListenOf(cfg, p); addr != "" {
			c.Local = config.IsLoopbackListen(addr)
		}
		out = append(out, c)
	}
	return out
}

// installBubblewrap is the command that installs bubblewrap here, ""
// where there is none (macOS); tests replace it.
var installBubblewrap = bubblewrap.Install

// ErrNoSandbox is the start's refusal to run claude unsandboxed for
// people besides the owners (errors.Is finds it in the error returned).
var ErrNoSandbox = errors.New("no sandbox for claude, and people besides the owners can reach it")

// Check refuses a configuration under which claude runs
// without a sandbox — agent.sandbox = "auto" and no working bubblewrap
// (state is runner.Runner.SandboxState) — while anyone besides the owners
// can reach the agent (access.Policy.Strangers, pol as the host applies
// it: claimed owners included). Written out, sandbox = "off" accepts the
// risk; only owners reaching it needs no sandbox. The error is one
// message saying who can reach it and the two ways out.
func Check(cfg *config.Config, pol access.Policy, state string, declare Declare) error {
	why, unavailable := runner.SandboxUnavailable(state)
	if !unavailable {
		return nil
	}
	who := pol.Strangers(reachChannels(cfg, declare(cfg)))
	if len(who) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  claude cannot be sandboxed on this machine (%s), so whoever reaches the agent runs its tools with all of clawhost's user's access;\n  besides the owners, these can reach it:\n", why)
	for _, w := range who {
		fmt.Fprintf(&b, "    - %s\n", w)
	}
	at := ""
	if a := cfg.Attribute("agent", "sandbox"); a != nil {
		at = " (" + config.Position(a.Expr.Range()) + ")"
	}
	install := installBubblewrap()
	switch {
	case install == "":
		fmt.Fprintf(&b, "  bubblewrap exists on Linux only: write sandbox = \"off\" in the agent block%s to accept the risk,\n  or let only the owners in (dm_policy = \"allowlist\", no other allow_from, no groups)", at)
	case strings.Contains(why, "not installed"):
		fmt.Fprintf(&b, "  install bubblewrap: %s\n  or accept the risk: write sandbox = \"off\" in the agent block%s", install, at)
	default:
		fmt.Fprintf(&b, "  make bubblewrap work here (unprivileged user namespaces: docs/install.md), or install it if it is missing: %s\n  or accept the risk: write sandbox = \"off\" in the agent block%s", install, at)
	}
	return fmt.Errorf("%w:\n%s", ErrNoSandbox, b.String())
}

// Strangers says why anyone besides the owners can reach cfg's agent
// (access.Policy.Strangers over its enabled channels, claimed owners
// included); none: only owners can.
func Strangers(cfg *config.Config, declare Declare) []string {
	set, err := settings.Pipeline(cfg)
	if err != nil {
		return nil
	}
	return set.Access.Strangers(reachChannels(cfg, declare(cfg)))
}

// Refusal is the refusal the host would start with on this
// machine (Check), nil when it would start: bubblewrap is
// probed as the runner does. `clawhost validate` and `clawhost doctor`
// report it.
func Refusal(cfg *config.Config, declare Declare) error {
	if cfg.Agent.Sandbox == runner.SandboxOff {
		return nil
	}
	set, err := settings.Pipeline(cfg)
	if err != nil {
		return nil // the start reports that first
	}
	// No probe needed when even the cautious view (every plugin a channel
	// reachable from anywhere) lets only owners in; the plugins are asked
	// only when bubblewrap does not work here (Check).
	if len(set.Access.Strangers(reachChannels(cfg, nil))) == 0 {
		return nil
	}
	rc, err := settings.Runner(cfg)
	if err != nil {
		return nil
	}
	return Check(cfg, set.Access, runner.ProbeSandbox(rc), declare)
}
