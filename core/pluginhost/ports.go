package pluginhost

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// Ports adapts the host to the ports the pipeline owns (core/delivery's
// and core/turn's Channels, core/turn's Hooks, core/gateway's Commands):
// calls address an instance by name, and the adapter finds its process,
// waits for it to be ready where the port says so, and calls the plugin.
// It is the only place the pipeline's calls meet go-plugin.
type Ports struct{ h *Supervisor }

// Ports returns the host's adapter to the pipeline's ports.
func (h *Supervisor) Ports() Ports { return Ports{h} }

// errUnknown is the error for an instance that is not configured: a
// non-retryable channel error, so delivery does not wait for it.
func errUnknown(instance string) error {
	return channel.Errorf(channel.CodeInvalidRequest, "instance %q is not running", instance)
}

// Known reports whether the instance is configured (it may be restarting).
func (p Ports) Known(instance string) bool { return p.h.Instance(instance) != nil }

// DisplayName is the platform name the instance's plugin declares
// (channel.Capabilities.DisplayName); while it restarts, the one from its
// last start. Empty when none is declared or the instance is unknown.
func (p Ports) DisplayName(instance string) string {
	inst := p.h.Instance(instance)
	if inst == nil {
		return ""
	}
	if _, desc, ok := inst.Client(); ok {
		return desc.Capabilities.DisplayName
	}
	return inst.Status().Description.Capabilities.DisplayName
}

// Capabilities are what the instance's plugin declared when it last
// started (while it restarts, the last start's); ok is false when it never
// started or the instance is unknown.
func (p Ports) Capabilities(instance string) (channel.Capabilities, bool) {
	inst := p.h.Instance(instance)
	if inst == nil {
		return channel.Capabilities{}, false
	}
	if _, desc, ok := inst.Client(); ok {
		return desc.Capabilities, true
	}
	d := inst.Status().Description
	return d.Capabilities, d.Name != ""
}

// Ready returns the description of an instance that is ready now.
func (p Ports) Ready(instance string) (pluginclient.Description, bool) {
	_, desc, ok := p.client(instance)
	return desc, ok
}

func (p Ports) client(instance string) (*pluginclient.Plugin, pluginclient.Description, bool) {
	inst := p.h.Instance(instance)
	if inst == nil {
		return nil, pluginclient.Description{}, false
	}
	return inst.Client()
}

func (p Ports) wait(ctx context.Context, instance string) (*pluginclient.Plugin, pluginclient.Description, error) {
	inst := p.h.Instance(instance)
	if inst == nil {
		return nil, pluginclient.Description{}, errUnknown(instance)
	}
	return inst.WaitReady(ctx)
}

// WaitReady blocks until the instance is ready, stopped, or ctx ends.
func (p Ports) WaitReady(ctx context.Context, instance string) (pluginclient.Description, error) {
	_, desc, err := p.wait(ctx, instance)
	return desc, err
}

// Send waits for the instance to be ready, then sends.
func (p Ports) Send(ctx context.Context, instance string, req channel.SendRequest) (channel.SendResponse, error) {
	plug, _, err := p.wait(ctx, instance)
	if err != nil {
		return channel.SendResponse{}, err
	}
	return plug.Send(ctx, req)
}

// React sets or clears a reaction; it fails at once when the instance is
// not ready.
func (p Ports) React(ctx context.Context, instance string, req channel.ReactRequest) error {
	plug, _, ok := p.client(instance)
	if !ok {
		return fmt.Errorf("plugin %s is not ready", instance)
	}
	return plug.React(ctx, req)
}

// Edit edits a message; it fails at once when the instance is not ready.
func (p Ports) Edit(ctx context.Context, instance string, req channel.EditRequest) error {
	plug, _, ok := p.client(instance)
	if !ok {
		return fmt.Errorf("plugin %s is not ready", instance)
	}
	return plug.Edit(ctx, req)
}

// SetTyping sets the typing indicator; it fails at once when the instance
// is not ready.
func (p Ports) SetTyping(ctx context.Context, instance string, req channel.TypingRequest) error {
	plug, _, ok := p.client(instance)
	if !ok {
		return fmt.Errorf("plugin %s is not ready", instance)
	}
	return plug.SetTyping(ctx, req)
}

// Download waits for the instance to be ready, then streams a media ref
// (the journal entry is the relay's concern: a local plugin is trusted
// with any ref of its own).
func (p Ports) Download(ctx context.Context, instance string, _ int64, ref string, maxBytes int64, w io.Writer) (channel.MediaInfo, error) {
	plug, _, err := p.wait(ctx, instance)
	if err != nil {
		return channel.MediaInfo{}, err
	}
	return plug.DownloadMedia(ctx, ref, maxBytes, w)
}

// BeforeAgentStart calls a hook instance, bounding the call by timeout.
// A hook that is still starting (or restarting) is waited for, bounded by
// its start timeout, so the first turn after a start does not run without
// its context; an instance known not to be a hook is never waited for. ok
// is false when the instance is not a hook.
func (p Ports) BeforeAgentStart(ctx context.Context, instance string, req hook.Request, timeout time.Duration) (hook.Response, bool, error) {
	inst := p.h.Instance(instance)
	if inst == nil {
		return hook.Response{}, false, nil
	}
	plug, desc, ok := inst.Client()
	if !ok {
		st := inst.Status()
		if last := st.Description; last.Name != "" && !last.Hook {
			return hook.Response{}, false, nil // a channel or command plugin
		}
		if st.State == StateStandby {
			return hook.Response{}, false, fmt.Errorf("hook %s: in standby: another host serves this plugin", instance)
		}
		wctx, cancel := context.WithTimeout(ctx, inst.startTimeout())
		var err error
		plug, desc, err = inst.WaitReady(wctx)
		cancel()
		if err != nil {
			return hook.Response{}, false, fmt.Errorf("hook %s: %w", instance, err)
		}
	}
	if !desc.Hook {
		return hook.Response{}, false, nil
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := plug.BeforeAgentStart(cctx, req)
	return resp, err == nil, err
}

// ListCommands asks every ready command plugin for its commands, by
// instance; a plugin that fails is skipped and its error returned with the
// others.
func (p Ports) ListCommands(ctx context.Context) (map[string][]command.Spec, []error) {
	out := map[string][]command.Spec{}
	var errs []error
	for _, inst := range p.h.Instances() {
		plug, desc, ok := inst.Client()
		if !ok || !desc.Command {
			continue
		}
		specs, err := plug.ListCommands(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("list commands of %s: %w", inst.Name(), err))
			continue
		}
		out[inst.Name()] = specs
	}
	return out, errs
}

// Execute waits for the command instance to be ready, then runs a command.
func (p Ports) Execute(ctx context.Context, instance string, req command.Request) (command.Response, error) {
	plug, _, err := p.wait(ctx, instance)
	if err != nil {
		return command.Response{}, err
	}
	return plug.Execute(ctx, req)
}

// PublishMenu sets the command menu of every ready channel that has one.
func (p Ports) PublishMenu(ctx context.Context, menu []channel.MenuEntry) []error {
	specs := make([]command.Spec, len(menu))
	for i, e := range menu {
		specs[i] = command.Spec{Name: e.Name, Description: e.Description}
	}
	var errs []error
	for _, inst := range p.h.Instances() {
		plug, desc, ok := inst.Client()
		if !ok || !desc.Channel || !desc.CommandMenu {
			continue
		}
		if err := plug.SetCommands(ctx, specs); err != nil {
			errs = append(errs, fmt.Errorf("publish the command menu to %s: %w", inst.Name(), err))
		}
	}
	return errs
}
