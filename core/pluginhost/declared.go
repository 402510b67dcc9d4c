package pluginhost

import (
	"context"

	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// What an instance's plugin declares of itself before it is configured —
// its kinds and the forms of its ids (channel.Capabilities.IDForms), what
// the host reads to write the configuration's ids as messages carry them —
// asked of the instance's own process on its first run, so that a start
// needs no probe process of the plugin beside it (core/pluginprobe asks one
// where no instance runs). The host's start waited for a probe process of
// every plugin the configuration writes ids for before it started the
// plugins: about 30 ms of every start, and each of those plugins started twice.

// declaration is an instance's first declaration (Declared).
type declaration struct {
	done chan struct{} // closed once desc is set, or the instance will not declare
	desc pluginclient.Description
	ok   bool
}

// declare asks plug for its description before it is configured, on the
// instance's first run; later runs ask nothing.
func (i *Instance) declare(ctx context.Context, plug *pluginclient.Plugin) {
	select {
	case <-i.decl.done:
		return
	default:
	}
	d, err := plug.Describe(ctx)
	if err != nil {
		return // the run ends, and none declares (undeclared)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	select {
	case <-i.decl.done:
	default:
		i.decl.desc, i.decl.ok = d, true
		close(i.decl.done)
	}
}

// undeclared ends the wait for a declaration once the instance's first run
// ended: it declared, or none will (its binary missing, its process
// crashed before it answered), as a probe process of the plugin would not
// have either.
func (i *Instance) undeclared() {
	i.mu.Lock()
	defer i.mu.Unlock()
	select {
	case <-i.decl.done:
	default:
		close(i.decl.done)
	}
}

// Declared is what instance's plugin declared of itself before it was
// configured, on its first run, waiting until that run got so far or
// ended; false when the instance is unknown, its first run ended without
// it, or ctx ended first (a plugin slow to start).
func (h *Supervisor) Declared(ctx context.Context, instance string) (pluginclient.Description, bool) {
	i := h.Instance(instance)
	if i == nil {
		return pluginclient.Description{}, false
	}
	select {
	case <-i.decl.done:
	default:
		select {
		case <-i.decl.done:
		case <-ctx.Done():
			return pluginclient.Description{}, false
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.decl.desc, i.decl.ok
}
