package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
)

// supervise runs the instance until stopped, restarting it with backoff.
// A run that ends missing or misconfigured is not restarted: the instance
// stays in that state until a reload replaces it.
func (i *Instance) supervise() {
	defer close(i.done)
	backoff := i.h.opts.FirstBackoff
	for {
		started := i.h.opts.Clock.Now()
		err := i.runOnce()
		i.undeclared() // the first run declared, or none will: as a probe process's would
		i.mu.Lock()
		if i.probeErr != nil {
			err, i.probeErr = i.probeErr, nil
		}
		lost := i.holdLost
		i.holdLost = false
		i.mu.Unlock()
		if i.ctx.Err() != nil {
			i.setState(StateStopped, nil)
			return
		}
		if lost {
			// Not a crash: back to standby at once, without backoff.
			i.log.Warn("channel lease lost; this instance stops and waits in standby", "instance", i.spec.Instance)
			i.setStandby(errHoldLost.Error())
			continue
		}
		var settled *runError
		if errors.As(err, &settled) {
			i.setState(settled.state, err)
			<-i.ctx.Done()
			i.setState(StateStopped, nil)
			return
		}
		if i.h.opts.Clock.Since(started) >= i.h.opts.StablePeriod {
			backoff = i.h.opts.FirstBackoff
		}
		i.mu.Lock()
		i.restarts++
		i.mu.Unlock()
		i.setState(StateDegraded, i.withStderr(err))
		i.log.Info("restarting plugin", "in", backoff.String())
		select {
		case <-i.h.opts.Clock.After(backoff):
		case <-i.ctx.Done():
			i.setState(StateStopped, nil)
			return
		}
		backoff = min(backoff*2, i.h.opts.MaxBackoff)
		i.setState(StateStarting, nil)
	}
}

// runOnce starts the plugin and serves it until its process ends or the
// instance is stopped. It returns why the run ended.
func (i *Instance) runOnce() error {
	proc, plug, err := i.launch()
	if err != nil {
		return err
	}
	// A channel's gate hold is given back only once its process is gone:
	// before, the old process could still poll for its stop grace while
	// another host's took over.
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	defer i.h.shutdown(i.log, proc)
	defer i.down()

	ctx, cancel := context.WithCancel(i.ctx)
	defer cancel()
	i.declare(ctx, plug)
	sch, cfgJSON, err := i.prepare(ctx, plug)
	if err != nil {
		return err
	}
	if hold := i.h.opts.Hold; hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if release, err = i.waitGate(ctx, cancel, plug); err != nil {
		return err
	}
	diags, err := plug.Configure(ctx, schema.Config{Instance: i.spec.Instance, JSON: cfgJSON, DataDir: i.spec.DataDir})
	if err != nil {
		return fmt.Errorf("configure plugin %s: %w", i.spec.Instance, err)
	}
	if len(diags) > 0 {
		return &runError{StateMisconfigured, fmt.Errorf("configure plugin %s: the plugin rejected its config block:\n%s", i.spec.Instance, i.explain(sch, diags))}
	}
	i.watchStatus(ctx, plug)
	// Described after Configure: capabilities may depend on the
	// configuration (a text_limit override).
	desc, err := plug.Describe(ctx)
	if err != nil {
		return fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}

	var stream *pluginclient.Stream
	var endStream context.CancelFunc
	if desc.Channel {
		if stream, endStream, err = openStream(ctx, plug); err != nil {
			return fmt.Errorf("plugin %s: %w", i.spec.Instance, err)
		}
	}
	i.mu.Lock()
	i.plug, i.desc = plug, desc
	i.mu.Unlock()
	i.serving()

	go i.probe(ctx, plug)
	exited := watchExit(ctx, proc)
	if stream != nil {
		return i.pump(ctx, plug, stream, endStream)
	}
	<-exited
	if i.ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("plugin %s exited", i.spec.Instance)
}

// prepare asks the plugin for its schema, decodes the instance's block
// against it, has the plugin check it (checkBeforeConfigure) and makes the
// data dir: everything before Configure.
func (i *Instance) prepare(ctx context.Context, plug *pluginclient.Plugin) (schema.Schema, []byte, error) {
	sch, err := plug.ConfigSchema(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}
	var cfgJSON []byte
	if i.spec.Decode != nil {
		if cfgJSON, err = i.spec.Decode(sch); err != nil {
			return nil, nil, &runError{StateMisconfigured, fmt.Errorf("configure plugin %s: %w", i.spec.Instance, err)}
		}
	}
	if err := i.checkBeforeConfigure(ctx, plug, sch, cfgJSON); err != nil {
		return nil, nil, err
	}
	if i.spec.DataDir != "" {
		if err := os.MkdirAll(i.spec.DataDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("configure plugin %s: data dir: %w", i.spec.Instance, err)
		}
	}
	return sch, cfgJSON, nil
}

// waitGate holds a channel instance in standby until it holds the gate
// (Options.Gate; no gate: at once). A channel is described before it is
// configured (the sdk answers with its kinds then). When the hold is lost
// later, cancel ends the run. release gives the hold back; nil when none
// was taken.
func (i *Instance) waitGate(ctx context.Context, cancel context.CancelFunc, plug *pluginclient.Plugin) (release func(), err error) {
	if i.h.opts.Gate == nil {
		return nil, nil
	}
	pre, err := plug.Describe(ctx)
	if err != nil {
		return nil, fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}
	if !pre.Channel {
		return nil, nil
	}
	i.mu.Lock()
	i.desc = pre // its kinds, while in standby
	i.mu.Unlock()
	held, release, err := i.hold(ctx)
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-held.Done():
			if ctx.Err() == nil {
				i.mu.Lock()
				i.holdLost = true
				i.mu.Unlock()
				cancel()
			}
		case <-ctx.Done():
		}
	}()
	return release, nil
}

// watchExit returns a channel closed when proc has exited or ctx ends. A
// process this host started is waited for (Process.Done: no wakeups while
// it lives); an attached one (debug mode) is looked at every
// attachedExitPoll.
func watchExit(ctx context.Context, proc *Process) <-chan struct{} {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		if done := proc.Done(); done != nil {
			select {
			case <-ctx.Done():
			case <-done:
			}
			return
		}
		for !proc.Exited() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(attachedExitPoll):
			}
		}
	}()
	return exited
}

// attachedExitPoll is how often watchExit looks whether an attached
// plugin process (debug mode) has ended.
const attachedExitPoll = 100 * time.Millisecond

// probe checks that a ready plugin answers (Describe) every ProbeInterval.
// One that does not answer within ProbeTimeout — hung, SIGSTOPped,
// deadlocked — is marked unresponsive and killed; the supervisor restarts
// it. Until it is ready again, calls that need it wait or fail at once
// instead of blocking on the dead one.
func (i *Instance) probe(ctx context.Context, plug *pluginclient.Plugin) {
	if i.reattach != nil {
		return // under a debugger: a breakpoint is not a hang
	}
	t, tick := i.h.opts.Clock.NewTicker(i.h.opts.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		// The probe's deadline is the host's own timer, not the call's: a
		// gRPC deadline (grpc-timeout) arms a timer in the plugin as well,
		// which stays in its runtime's timer heap after the answer and
		// wakes the idle plugin ProbeTimeout after every probe, its runtime
		// then spinning for 0.6–0.85 ms of CPU (issue 84).
		pctx, cancel := context.WithCancel(ctx)
		late := i.h.opts.Clock.AfterFunc(i.h.opts.ProbeTimeout, cancel)
		_, err := plug.Describe(pctx)
		late.Stop()
		cancel()
		if err == nil || ctx.Err() != nil {
			continue
		}
		perr := fmt.Errorf("plugin %s did not answer the liveness probe within %s: killed, it restarts", i.spec.Instance, i.h.opts.ProbeTimeout)
		i.mu.Lock()
		i.probeErr = perr // why the run ends, for the degraded state
		i.mu.Unlock()
		i.setState(StateUnresponsive, perr)
		// SIGKILL to its process group (Setpgid, spawn.go), not
		// client.Kill: a stopped process never answers the graceful
		// shutdown that Kill tries first.
		i.mu.Lock()
		pid := i.pid
		i.mu.Unlock()
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		return
	}
}

// withStderr adds what the plugin last wrote to stderr to the error of a
// failed run (a panic, a refused start), unless the error already says it.
func (i *Instance) withStderr(err error) error {
	i.mu.Lock()
	tail := i.tail
	i.mu.Unlock()
	if err == nil || tail == nil {
		return err
	}
	if t := tail.String(); t != "" && !strings.Contains(err.Error(), t) {
		return fmt.Errorf("%w; the plugin's last stderr lines: %s", err, t)
	}
	return err
}
