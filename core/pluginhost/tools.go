package pluginhost

import (
	"context"
	"fmt"

	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/tool"
)

// ListTools asks every tool plugin for which want is true for its tools,
// by instance (core/agenttools' PluginTools port). An instance still
// starting (or restarting) is waited for, bounded by its start timeout,
// so a claude process started right after the host does not go without
// its tools; an instance known not to offer tools is never waited for. A
// plugin that fails is left out (and logged).
func (p Ports) ListTools(ctx context.Context, want func(instance string) bool) map[string][]tool.Spec {
	out := map[string][]tool.Spec{}
	for _, inst := range p.h.Instances() {
		if !want(inst.Name()) {
			continue
		}
		plug, err := p.toolPlugin(ctx, inst)
		if err != nil {
			p.h.log.Warn("a tool plugin's tools are not offered", "plugin", inst.Name(), "error", err)
			continue
		}
		if plug == nil {
			continue
		}
		specs, err := plug.ListTools(ctx)
		if err != nil {
			p.h.log.Warn("a tool plugin's tools are not offered", "plugin", inst.Name(), "error", err)
			continue
		}
		out[inst.Name()] = specs
	}
	return out
}

// CallTool calls a tool of instance; ctx bounds the call. An instance
// still starting is waited for within ctx.
func (p Ports) CallTool(ctx context.Context, instance string, req tool.CallRequest) (tool.Result, error) {
	inst := p.h.Instance(instance)
	if inst == nil {
		return tool.Result{}, fmt.Errorf("plugin %s is not running", instance)
	}
	plug, err := p.toolPlugin(ctx, inst)
	if err != nil {
		return tool.Result{}, err
	}
	if plug == nil {
		return tool.Result{}, fmt.Errorf("plugin %s offers no tools", instance)
	}
	return plug.CallTool(ctx, req)
}

// toolPlugin is inst's client once ready, nil when it offers no tools.
func (p Ports) toolPlugin(ctx context.Context, inst *Instance) (*pluginclient.Plugin, error) {
	plug, desc, ok := inst.Client()
	if !ok {
		st := inst.Status()
		if last := st.Description; last.Name != "" && !last.Tool {
			return nil, nil
		}
		if st.State == StateStandby {
			return nil, fmt.Errorf("in standby: another host serves this plugin")
		}
		wctx, cancel := context.WithTimeout(ctx, inst.startTimeout())
		var err error
		plug, desc, err = inst.WaitReady(wctx)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if !desc.Tool {
		return nil, nil
	}
	return plug, nil
}
