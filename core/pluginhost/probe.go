package pluginhost

import (
	"context"
	"fmt"

	"github.com/clawhost/clawhost/sdk/host"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Probe starts the plugin of spec, asks for its description and config
// schema, and stops it. `clawhost validate` uses it to check every plugin's
// config block against the schema the plugin declares.
func (h *Host) Probe(ctx context.Context, spec Spec) (host.Description, schema.Schema, error) {
	inst := newInstance(h, spec)
	defer inst.cancel()
	client, proc, plug, err := inst.launch()
	if err != nil {
		return host.Description{}, nil, err
	}
	defer h.shutdown(client, proc)
	desc, err := plug.Describe(ctx)
	if err != nil {
		return host.Description{}, nil, fmt.Errorf("probe plugin %s: %w", spec.Instance, err)
	}
	sch, err := plug.ConfigSchema(ctx)
	if err != nil {
		return desc, nil, fmt.Errorf("probe plugin %s: %w", spec.Instance, err)
	}
	return desc, sch, nil
}
