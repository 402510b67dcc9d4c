package pluginprobe

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/settings"
)

// runAlonePoll is how often RunAlone looks at the instance's status.
const runAlonePoll = 100 * time.Millisecond

// RunAlone runs the enabled plugin instance name of cfg alone, under
// a supervisor of its own, exactly as the host would run it (settings.Plugin:
// its binary, environment, data dir and config block), but with no store:
// its inbound messages are not taken, so not acked. watch is called with
// the instance's status each time it changes and may ask the plugin to try
// again (retry, [pluginhost.Instance.Retry]); the plugin runs until watch
// returns done or an error, or ctx ends, then it is stopped as at the
// host's shutdown. clawhost init links WhatsApp with it, so the linked
// device is in the data dir clawhost run gives the instance.
func RunAlone(ctx context.Context, cfg *config.Config, name string, log hclog.Logger,
	watch func(st pluginhost.Status, retry func(context.Context) error) (done bool, err error)) error {
	p := cfg.Plugin(name)
	if p == nil {
		return fmt.Errorf("run plugin %s: no such plugin block in %s", name, cfg.Path())
	}
	sup := pluginhost.New(pluginhost.Options{Logger: log, LogLevel: cfg.LogLevel})
	defer sup.Stop()
	sup.Apply([]pluginhost.Spec{settings.Plugin(cfg, p)})
	inst := sup.Instance(name)
	tick := time.NewTicker(runAlonePoll)
	defer tick.Stop()
	var last pluginhost.Status
	for first := true; ; first = false {
		st := inst.Status()
		if first || changed(last, st) {
			last = st
			done, err := watch(st, inst.Retry)
			if done || err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("run plugin %s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// changed reports whether a status differs from the last one in what a
// watcher shows: the state, the plugin's message and what it asks for.
func changed(a, b pluginhost.Status) bool {
	if a.State != b.State || a.Message != b.Message || a.LastError != b.LastError || (a.Attention == nil) != (b.Attention == nil) {
		return true
	}
	return a.Attention != nil && *a.Attention != *b.Attention
}
