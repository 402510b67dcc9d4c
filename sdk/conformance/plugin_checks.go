// The checks every plugin owes the host whatever its kinds, and those of
// command and hook plugins.

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

func checkDescribe(ctx context.Context, tg Target) (string, error) {
	return tg.check(ctx, false, func(ctx context.Context, inst Instance) (string, error) {
		d, err := inst.Plugin.Describe(ctx)
		if err != nil {
			return "", fmt.Errorf("describe: %w", err)
		}
		var p problems
		if d.Name == "" {
			p.addf("describe: empty name")
		}
		kinds := d.Kinds()
		if len(kinds) == 0 {
			p.addf("describe: the plugin offers no kind")
		}
		return fmt.Sprintf("%s %s, %d kind(s)", d.Name, d.Version, len(kinds)), p.err()
	})
}

// checkDescribeChannel checks a configured channel's description: the
// capabilities are described once the channel is configured (before, a
// channel answers with its kinds only).
func checkDescribeChannel(ctx context.Context, tg Target) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	inst, d, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	if !d.Channel {
		return "", fmt.Errorf("describe: plugin %q does not offer a channel", d.Name)
	}
	var p problems
	if d.Name == "" {
		p.addf("describe: empty name")
	}
	if d.Capabilities.MaxTextLength <= 0 {
		p.addf("capabilities: max text length %d", d.Capabilities.MaxTextLength)
	}
	s, err := inst.Plugin.ConfigSchema(ctx)
	if err != nil {
		return "", errors.Join(append(p, fmt.Errorf("config schema: %w", err))...)
	}
	p = append(p, schemaProblems(s)...)
	return "", p.err()
}

func checkSchema(ctx context.Context, tg Target) (string, error) {
	return tg.check(ctx, false, func(ctx context.Context, inst Instance) (string, error) {
		s, err := inst.Plugin.ConfigSchema(ctx)
		if err != nil {
			return "", fmt.Errorf("config schema: %w", err)
		}
		return fmt.Sprintf("%d attribute(s)", len(s)), schemaProblems(s).err()
	})
}

// schemaProblems: uniquely named, described attributes with JSON defaults.
func schemaProblems(s schema.Schema) problems {
	var p problems
	seen := map[string]bool{}
	for _, a := range s {
		if a.Name == "" || seen[a.Name] {
			p.addf("config schema: empty or duplicate attribute name %q", a.Name)
		}
		seen[a.Name] = true
		if a.Description == "" {
			p.addf("config schema: attribute %q has no description", a.Name)
		}
		if raw, ok := a.Default.(json.RawMessage); ok && len(raw) > 0 && !json.Valid(raw) {
			p.addf("config schema: attribute %q: default is not JSON: %q", a.Name, raw)
		}
	}
	return p
}

func checkValidateConfigure(ctx context.Context, tg Target) (string, error) {
	inst, stop, err := tg.start(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	cfg := schema.Config{Instance: "conformance", JSON: tg.Config, DataDir: inst.DataDir}
	var note string
	diags, err := inst.Plugin.Validate(ctx, cfg)
	switch {
	case errors.Is(err, pluginclient.ErrUnimplemented):
		note = "Validate is not implemented: the config is checked by Configure only"
	case err != nil:
		return "", fmt.Errorf("validate: %w", err)
	case hasErrors(diags):
		return "", fmt.Errorf("validate rejected the config: %w", diags)
	}
	diags, err = inst.Plugin.Configure(ctx, cfg)
	if err != nil {
		return note, fmt.Errorf("configure: %w", err)
	}
	if hasErrors(diags) {
		return note, fmt.Errorf("configure rejected the config: %w", diags)
	}
	return note, nil
}

// checkProbe runs the plugin's live checks (sdk.Plugin.Probe) on
// Target.Config in a process that is never configured: a plugin without
// them passes with a note (nothing to check); one with them answers a report whose every check is
// named and says what to do when it did not pass. What the checks found
// (a test token the platform refuses) is the note, not a failure: the
// probe worked.
func checkProbe(ctx context.Context, tg Target) (string, error) {
	return tg.check(ctx, false, func(ctx context.Context, inst Instance) (string, error) {
		rep, err := inst.Plugin.Probe(ctx, schema.Config{Instance: "conformance", JSON: tg.Config, DataDir: inst.DataDir})
		switch {
		case errors.Is(err, pluginclient.ErrUnimplemented):
			return "Probe is not implemented: the plugin has no live checks", nil
		case err != nil:
			return "", fmt.Errorf("probe: %w", err)
		}
		var p problems
		notes := []string{}
		for i, c := range rep.Checks {
			if c.Name == "" {
				p.addf("probe: check %d has no name", i)
			}
			if c.Verdict != probe.OK && c.Do == "" {
				p.addf("probe: check %q is %s and says nothing to do", c.Name, c.Verdict)
			}
			notes = append(notes, c.Name+": "+string(c.Verdict))
		}
		if id := rep.Identity; id.ID != "" || id.Handle != "" {
			notes = append(notes, "bot "+strings.TrimSpace(id.Handle+" "+id.ID))
		}
		return strings.Join(notes, ", "), p.err()
	})
}

func checkWatchStatus(ctx context.Context, tg Target) (string, error) {
	return tg.check(ctx, true, func(ctx context.Context, inst Instance) (string, error) {
		c, _, err := inst.Plugin.WatchStatus(ctx)
		if errors.Is(err, pluginclient.ErrUnimplemented) {
			return "WatchStatus is not implemented: ready while running", nil
		}
		if err != nil {
			return "", fmt.Errorf("watch status: %w", err)
		}
		select {
		case s, ok := <-c:
			if !ok {
				// A stream that ends at once answered Unimplemented on the
				// first receive: the same as not implemented.
				return "WatchStatus is not implemented: ready while running", nil
			}
			switch s.State {
			case status.Ready, status.NeedsAttention, status.Degraded, status.Starting:
				return "state " + string(s.State), nil
			}
			return "", fmt.Errorf("watch status: unknown state %q (want ready, needs_attention, degraded or starting)", s.State)
		case <-ctx.Done():
			return "", fmt.Errorf("watch status: no status within %s (a plugin sends its current status at once)", tg.timeout())
		}
	})
}

// checkStop configures a plugin, opens the streams the host keeps open
// (Receive for a channel, WatchStatus) and stops it: Target.Stop's verdict.
func checkStop(ctx context.Context, tg Target) (string, error) {
	inst, d, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.Channel {
		if _, err := inst.Plugin.Receive(sctx, 16); err != nil {
			_ = stop()
			return "", fmt.Errorf("receive: %w", err)
		}
	}
	_, _, _ = inst.Plugin.WatchStatus(sctx)
	if tg.Stop == nil {
		return "stopped by the harness", nil
	}
	if err := stop(); err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	return "exited on SIGTERM with no warning or error", nil
}

func checkListCommands(ctx context.Context, tg Target) (string, error) {
	_, specs, done, err := tg.commands(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	return commandProblems(specs)
}

// commands starts and configures the plugin and lists its commands
// (within the target's timeout); done stops the plugin.
func (tg Target) commands(ctx context.Context) (inst Instance, specs []command.Spec, done func(), err error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return Instance{}, nil, nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	specs, err = inst.Plugin.ListCommands(lctx)
	if err != nil {
		_ = stop()
		return Instance{}, nil, nil, fmt.Errorf("list commands: %w", err)
	}
	return inst, specs, func() { _ = stop() }, nil
}

// commandProblems: at least one command; names and aliases lowercase,
// without the slash or spaces, unique; each described.
func commandProblems(specs []command.Spec) (string, error) {
	var p problems
	if len(specs) == 0 {
		p.addf("list commands: a command plugin lists no command")
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range specs {
		names = append(names, "/"+s.Name)
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			switch {
			case n == "" || strings.ContainsAny(n, " /\t\n") || n != strings.ToLower(n):
				p.addf("list commands: name %q: want a lowercase word without the slash", n)
			case seen[n]:
				p.addf("list commands: %q is listed twice", n)
			}
			seen[n] = true
		}
		if s.Description == "" {
			p.addf("list commands: /%s has no description", s.Name)
		}
	}
	return strings.Join(names, " "), p.err()
}

func checkBeforeAgentStart(ctx context.Context, tg Target) (string, error) {
	return tg.check(ctx, true, func(ctx context.Context, inst Instance) (string, error) {
		res, err := inst.Plugin.BeforeAgentStart(ctx, hook.Request{
			Conversation: command.Conversation{SessionKey: "conformance", Instance: "conformance", Channel: "conformance", ChatType: channel.ChatDirect, ChatID: "c1"},
			Sender:       channel.Sender{ID: "u1", Name: "Conformance"},
			Message:      "hello", NewSession: true, Workspace: inst.DataDir, SessionID: "00000000-0000-4000-8000-000000000000",
		})
		var ce *channel.Error
		if errors.As(err, &ce) {
			return "", errorOnly("before_agent_start", ce)
		}
		if err != nil {
			return "", fmt.Errorf("before_agent_start: %w", err)
		}
		return fmt.Sprintf("%d bytes of context", len(res.PrependContext)), nil
	})
}

// hasErrors reports whether d holds a diagnostic that is not a warning.
func hasErrors(d schema.Diagnostics) bool {
	for _, x := range d {
		if !x.Warning {
			return true
		}
	}
	return false
}
