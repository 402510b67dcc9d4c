package pluginhost

import (
	"context"
	"errors"
	"fmt"
)

// Gate grants channel instances the right to run. With several hosts on
// one database it is the lease "channel/<instance>" (core's gate): one
// host polls a Telegram token, the others keep the instance in standby.
type Gate interface {
	// Hold blocks until instance may run on this host, or ctx ends (then
	// it returns ctx's error). waiting is called, from Hold's goroutine,
	// with why it waits, each time it looks again. The returned context
	// ends when the hold is lost; release gives it back, and is called
	// once the instance stopped running.
	Hold(ctx context.Context, instance string, waiting func(reason string)) (held context.Context, release func(), err error)
}

// errHoldLost ends a channel's run when its gate hold is lost: the
// instance goes back to standby, not through a crash's backoff.
var errHoldLost = errors.New("channel lease lost: another host serves this channel now")

// standbyAction is what the operator reads about an instance in standby.
const standbyAction = "none: another host serves this channel; this host takes it over if that one stops"

// hold keeps a channel instance in standby until the gate lets it run.
// It is called after the plugin was described and before it is
// configured (a configured channel starts polling its platform). held
// ends when the hold is lost.
func (i *Instance) hold(ctx context.Context) (held context.Context, release func(), err error) {
	i.setStandby("waiting for the channel lease")
	held, release, err = i.h.opts.Gate.Hold(ctx, i.spec.Instance, i.setStandby)
	if err != nil {
		return nil, nil, fmt.Errorf("plugin %s: waiting for the channel lease: %w", i.spec.Instance, err)
	}
	i.mu.Lock()
	i.standby = ""
	i.mu.Unlock()
	i.setState(StateStarting, nil)
	return held, release, nil
}

// setStandby puts the instance in standby, saying why.
func (i *Instance) setStandby(reason string) {
	i.mu.Lock()
	i.standby = reason
	state := i.state
	i.mu.Unlock()
	if state != StateStandby {
		i.setState(StateStandby, nil)
	}
}
