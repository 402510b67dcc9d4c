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

// Send waits for the instance to take calls, then sends. A send to a
// degraded instance that fails with an error that may pass makes later
// calls wait for it to be ready again (Instance.callable).
func (p Ports) Send(ctx context.Context, instance string, req channel.SendRequest) (channel.SendResponse, error) {
	plug, _, err := p.wait(ctx, instance)
	if err != nil {
		return channel.SendResponse{}, err
	}
	resp, err := plug.Send(ctx, req)
	if err != nil && channel.CodeOf(err).Retryable() {
		if inst := p.h.Instance(instance); inst != nil {
			inst.notedSendFailed()
		}
	}
	return resp, err
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
	plug, ok, err := p.hook(ctx, instance, "hook", func(d pluginclient.Description) bool { return d.Hook }, 0)
	if !ok || err != nil {
		return hook.Response{}, false, err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := plug.BeforeAgentStart(cctx, req)
	return resp, err == nil, err
}

// MessageReceived calls a message_received hook instance, bounding the
// call by timeout. A hook that is starting is waited for within the same
// timeout (the chat's next messages wait behind it); ok is false when the
// instance is not a message_received hook.
func (p Ports) MessageReceived(ctx context.Context, instance string, req hook.ReceivedRequest, timeout time.Duration) (hook.ReceivedResponse, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plug, ok, err := p.hook(cctx, instance, "message_received hook", func(d pluginclient.Description) bool { return d.Received }, timeout)
	if !ok || err != nil {
		return hook.ReceivedResponse{}, ok, err
	}
	resp, err := plug.MessageReceived(cctx, req)
	return resp, true, err
}

// IsReceivedHook reports whether instance is a message_received hook, or
// may be one: it has not described itself yet (it is starting).
func (p Ports) IsReceivedHook(instance string) bool {
	return p.mayBe(instance, func(d pluginclient.Description) bool { return d.Received })
}

// IsSendingHook reports whether instance is a message_sending hook, or may
// be one.
func (p Ports) IsSendingHook(instance string) bool {
	return p.mayBe(instance, func(d pluginclient.Description) bool { return d.Sending })
}

// IsEndHook reports whether instance is an agent_end hook, or may be one.
func (p Ports) IsEndHook(instance string) bool {
	return p.mayBe(instance, func(d pluginclient.Description) bool { return d.Ender })
}

// mayBe reports whether instance is of the kind is says or has not
// described itself yet; without blocking.
func (p Ports) mayBe(instance string, is func(pluginclient.Description) bool) bool {
	inst := p.h.Instance(instance)
	if inst == nil {
		return false
	}
	if _, desc, ok := inst.Client(); ok {
		return is(desc)
	}
	last := inst.Status().Description
	return last.Name == "" || is(last)
}

// MessageSending calls a message_sending hook instance, bounding the call
// (and the wait for a starting hook) by timeout; ok is false when the
// instance is not a message_sending hook.
func (p Ports) MessageSending(ctx context.Context, instance string, req hook.SendingRequest, timeout time.Duration) (hook.SendingResponse, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plug, ok, err := p.hook(cctx, instance, "message_sending hook", func(d pluginclient.Description) bool { return d.Sending }, timeout)
	if !ok || err != nil {
		return hook.SendingResponse{}, ok, err
	}
	resp, err := plug.MessageSending(cctx, req)
	return resp, true, err
}

// AgentEnd calls an agent_end hook instance, bounding the call (and the
// wait for a starting hook) by timeout; ok is false when the instance is
// not an agent_end hook.
func (p Ports) AgentEnd(ctx context.Context, instance string, end hook.End, timeout time.Duration) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plug, ok, err := p.hook(cctx, instance, "agent_end hook", func(d pluginclient.Description) bool { return d.Ender }, timeout)
	if !ok || err != nil {
		return ok, err
	}
	return true, plug.AgentEnd(cctx, end)
}

// hook returns the client of a hook instance of the kind is says, waiting
// for one that is starting (or restarting) up to wait (0: its start
// timeout). ok is false, without an error, when the instance is missing
// or known not to be of that kind (it is never waited for); ok is true
// with an error when it should be and cannot be reached.
func (p Ports) hook(ctx context.Context, instance, kind string, is func(pluginclient.Description) bool, wait time.Duration) (*pluginclient.Plugin, bool, error) {
	inst := p.h.Instance(instance)
	if inst == nil {
		return nil, false, nil
	}
	plug, desc, ok := inst.Client()
	if !ok {
		st := inst.Status()
		if last := st.Description; last.Name != "" && !is(last) {
			return nil, false, nil // another kind of plugin
		}
		if st.State == StateStandby {
			return nil, true, fmt.Errorf("%s %s: in standby: another host serves this plugin", kind, instance)
		}
		if wait <= 0 {
			wait = inst.startTimeout()
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		var err error
		plug, desc, err = inst.WaitReady(wctx)
		cancel()
		if err != nil {
			return nil, true, fmt.Errorf("%s %s: %w", kind, instance, err)
		}
	}
	if !is(desc) {
		return nil, false, nil
	}
	return plug, true, nil
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

// PublishChatMenu sets one chat's command menu on instance (ChatID "":
// the instance's default menu). A channel that is not ready, shows no
// menu, or no menu per chat (a plugin that predates
// command_menu_per_chat) is left alone: its chats show the default menu.
func (p Ports) PublishChatMenu(ctx context.Context, instance string, menu channel.ChatMenu) error {
	for _, inst := range p.h.Instances() {
		if inst.Name() != instance {
			continue
		}
		plug, desc, ok := inst.Client()
		if !ok || !desc.Channel || !desc.CommandMenu || (menu.ChatID != "" && !desc.CommandMenuPerChat) {
			return nil
		}
		if err := plug.SetChatCommands(ctx, menu); err != nil {
			return fmt.Errorf("publish the command menu of chat %q to %s: %w", menu.ChatID, instance, err)
		}
	}
	return nil
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
