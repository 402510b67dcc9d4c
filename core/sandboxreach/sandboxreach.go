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
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/settings"
)

// nonChannelSources are the first-party plugins that carry no people's
// messages (a command, hooks). Any other enabled plugin may be a channel:
// the file does not say, and a plugin describes itself only once started.
var nonChannelSources = map[string]bool{"ping": true, "clock-hook": true, "transcribe-hook": true}

// reachChannels are cfg's enabled plugin instances people may write
// through, the web chat on loopback marked local (only who holds its
// token, kept 0600 in data_dir, opens it).
func reachChannels(cfg *config.Config) []access.Channel {
	var out []access.Channel
	for _, p := range cfg.EnabledPlugins() {
		if nonChannelSources[p.Source] {
			continue
		}
		c := access.Channel{Instance: p.Name}
		if p.Source == "webchat" {
			listen, _ := cfg.StringValue(cfg.Attribute("plugin", p.Name, "config", "listen"))
			if listen == "" {
				listen = webchatDefaultListen
			}
			c.Local = config.IsLoopbackListen(listen)
		}
		out = append(out, c)
	}
	return out
}

// webchatDefaultListen is the web chat plugin's listen when its block
// does not set it (plugins/webchat.DefaultListen; core does not import
// plugins).
const webchatDefaultListen = "127.0.0.1:8790"

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
func Check(cfg *config.Config, pol access.Policy, state string) error {
	why, unavailable := runner.SandboxUnavailable(state)
	if !unavailable {
		return nil
	}
	who := pol.Strangers(reachChannels(cfg))
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
func Strangers(cfg *config.Config) []string {
	set, err := settings.Pipeline(cfg)
	if err != nil {
		return nil
	}
	return set.Access.Strangers(reachChannels(cfg))
}

// Refusal is the refusal the host would start with on this
// machine (Check), nil when it would start: bubblewrap is
// probed as the runner does. `clawhost validate` and `clawhost doctor`
// report it.
func Refusal(cfg *config.Config) error {
	if cfg.Agent.Sandbox == runner.SandboxOff {
		return nil
	}
	set, err := settings.Pipeline(cfg)
	if err != nil {
		return nil // the start reports that first
	}
	if len(set.Access.Strangers(reachChannels(cfg))) == 0 {
		return nil // no probe needed
	}
	rc, err := settings.Runner(cfg)
	if err != nil {
		return nil
	}
	return Check(cfg, set.Access, runner.ProbeSandbox(rc))
}
