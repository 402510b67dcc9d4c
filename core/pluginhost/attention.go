package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/status"
)

// What a running plugin reports about itself (sdk/status) and how it
// becomes the instance's state.
//
// After Configure succeeded, the host opens the plugin's WatchStatus stream
// for the life of the process and keeps the latest report. While the run
// serves (from the moment it would be ready until its process ends), the
// report decides the state:
//
//	ready            → StateReady
//	needs_attention  → StateNeedsAttention: the message is the Action,
//	                   the Attention is shown as reported
//	degraded         → StateDegraded, the message as the last error
//	starting         → StateStarting: a step on the way to ready (logging
//	                   in after a link), logged at INFO with its message,
//	                   not an error; calls wait for ready
//
// Neither needs_attention nor a reported degraded is restarted: the plugin
// is up and either waits for a person or retries by itself. The liveness
// probe keeps probing it; one that stops answering is killed as any other.
// A plugin that does not implement WatchStatus (built before it existed)
// never reports and is ready while it runs. When the process ends, its
// report ends with it: the crash handling of supervise decides the state,
// and a QR code of a dead process is never shown.

// firstReportWait bounds how long a start waits for the plugin's first
// report (which the sdk sends as soon as the stream opens) before the
// instance is shown ready: a plugin that already knows it needs attention
// does not flash "ready" first. A slower report still applies when it
// comes.
const firstReportWait = 2 * time.Second

// rewatchDelay is the pause before the status stream is opened again when
// it broke while the process kept running.
const rewatchDelay = time.Second

// Errors of [Instance.Retry].
var (
	// ErrUnknownInstance: no instance has that name.
	ErrUnknownInstance = errors.New("no such plugin instance")
	// ErrNoRetry: the instance does not offer a retry now (it is not in
	// needs_attention, or its Attention has no Retry label).
	ErrNoRetry = errors.New("the plugin offers no retry now")
)

// actionReportedDegraded is the Action of a plugin that reported degraded.
const actionReportedDegraded = "it keeps running and tries again by itself (it is not restarted); the message says what fails — if it lasts, check the network and the platform's status"

// actionNeedsAttention is the Action of a plugin that needs attention but
// said nothing about what to do.
const actionNeedsAttention = "the plugin needs an operator; read its log lines"

// stateOf maps a plugin's report to the instance state. A state this host
// does not know (from a newer plugin) is not ready: degraded, with the
// state's name in the last error (see reportErr).
func stateOf(st status.Status) State {
	switch st.State {
	case status.Ready, "":
		return StateReady
	case status.NeedsAttention:
		return StateNeedsAttention
	case status.Starting:
		return StateStarting
	default:
		return StateDegraded
	}
}

// reportErr is the last error a report of st sets: the message of a
// degraded report (or of a state this host does not know), nil otherwise.
func (i *Instance) reportErr(st status.Status) error {
	if stateOf(st) != StateDegraded {
		return nil
	}
	msg := st.Message
	if msg == "" {
		msg = "degraded, without saying why"
	}
	if st.State != status.Degraded {
		return fmt.Errorf("plugin %s reports the state %q, which this host does not know: %s", i.spec.Instance, st.State, msg)
	}
	return fmt.Errorf("plugin %s reports: %s", i.spec.Instance, msg)
}

// watchStatus opens the status stream of a configured plugin and applies
// its reports until ctx ends. It waits up to firstReportWait for the
// first report, so that serving starts from it.
func (i *Instance) watchStatus(ctx context.Context, plug *pluginclient.Plugin) {
	i.rmu.Lock()
	i.mu.Lock()
	i.gen++
	gen := i.gen
	i.report = status.Status{}
	i.mu.Unlock()
	i.rmu.Unlock()

	first := make(chan struct{})
	go func() {
		once := func() {
			select {
			case <-first:
			default:
				close(first)
			}
		}
		defer once()
		for ctx.Err() == nil {
			reports, end, err := plug.WatchStatus(ctx)
			if err == nil {
				for st := range reports {
					i.applyReport(gen, st)
					once()
				}
				err = end()
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, pluginclient.ErrUnimplemented) {
				i.log.Debug("plugin does not report its status; it is ready while it runs")
				return
			}
			// The stream broke; if the process is gone the run ends and
			// cancels ctx, else the stream is opened again.
			i.log.Debug("plugin status stream ended; opening it again", "error", err, "in", rewatchDelay.String())
			once()
			select {
			case <-ctx.Done():
				return
			case <-i.h.opts.Clock.After(rewatchDelay):
			}
		}
	}()
	t, fired := i.h.opts.Clock.NewTimer(firstReportWait)
	defer t.Stop()
	select {
	case <-first:
	case <-fired:
		i.log.Debug("plugin sent no status report yet; starting without it", "waited", firstReportWait.String())
	case <-ctx.Done():
	}
}

// serving marks the current run as serving and enters the state its
// latest report calls for (ready when there is none).
func (i *Instance) serving() {
	i.rmu.Lock()
	defer i.rmu.Unlock()
	i.mu.Lock()
	was := i.callable()
	i.up = true
	st := i.report
	i.syncReady(was)
	i.mu.Unlock()
	i.enter(stateOf(st), st)
}

// down ends the serving of the current run: later reports of it are
// dropped and its report is forgotten.
func (i *Instance) down() {
	i.rmu.Lock()
	defer i.rmu.Unlock()
	i.mu.Lock()
	was := i.callable()
	i.up = false
	i.gen++
	i.report = status.Status{}
	i.syncReady(was)
	i.mu.Unlock()
}

// applyReport keeps st as the latest report of run gen and, while the run
// serves, moves the instance to the state it calls for. A report that only
// changes the Attention (a rotated QR code) changes no state: Status reads
// it from the report.
func (i *Instance) applyReport(gen int, st status.Status) {
	i.rmu.Lock()
	defer i.rmu.Unlock()
	i.mu.Lock()
	if gen != i.gen {
		i.mu.Unlock()
		return
	}
	prev := i.report
	i.report = st
	up, cur := i.up, i.state
	i.mu.Unlock()
	if !up {
		return // serving() applies it
	}
	switch cur {
	case StateReady, StateNeedsAttention, StateDegraded, StateStarting:
	default:
		// Unresponsive: the probe killed the process; the run is ending.
		return
	}
	next := stateOf(st)
	if next != cur {
		i.enter(next, st)
		return
	}
	if st.Message == prev.Message {
		return
	}
	// Same state, new message.
	switch next {
	case StateDegraded:
		i.mu.Lock()
		i.lastErr = i.reportErr(st)
		i.mu.Unlock()
		i.log.Error("plugin degraded", "state", next, "error", i.reportErr(st))
	case StateNeedsAttention:
		i.logAttention(st)
	case StateStarting:
		i.log.Info("plugin is starting", "message", st.Message)
	}
}

// enter moves a serving instance to state s for report st, logs it, and
// calls OnReady when it becomes ready.
func (i *Instance) enter(s State, st status.Status) {
	i.setState(s, i.reportErr(st))
	switch s {
	case StateNeedsAttention:
		i.logAttention(st)
	case StateStarting:
		i.log.Info("plugin is starting", "message", st.Message)
	case StateReady:
		if f := i.h.opts.OnReady; f != nil {
			go f(i)
		}
	}
}

// logAttention logs a needs_attention report: the message, the kind of
// attention, never its data (a pairing payload links a device).
func (i *Instance) logAttention(st status.Status) {
	args := []any{"message", st.Message}
	if a := st.Attention; a != nil {
		args = append(args, "attention", string(a.Kind))
		if a.Retry != "" {
			args = append(args, "retry", a.Retry)
		}
	}
	i.log.Warn("plugin needs attention", args...)
}

// reported adds the plugin's report to a snapshot of the instance; i.mu
// is held.
func (i *Instance) reported(st *Status) {
	if !i.up {
		return
	}
	switch st.State {
	case StateReady, StateNeedsAttention, StateDegraded, StateStarting:
		st.Message = i.report.Message
	default:
		return // unresponsive: the probe's verdict, not the plugin's
	}
	switch st.State {
	case StateReady:
		// A ready plugin's link: the address it serves people at.
		if a := i.report.Attention; a != nil && a.Kind == status.Link {
			c := *a
			st.Attention = &c
		}
	case StateNeedsAttention:
		st.Action = i.report.Message
		if st.Action == "" {
			st.Action = actionNeedsAttention
		}
		if a := i.report.Attention; a != nil {
			c := *a
			st.Attention = &c
		}
	case StateDegraded:
		st.Action = actionReportedDegraded
	}
}

// attentionError is why a call to an instance in needs_attention fails: a
// non-retryable channel error (delivery gives up at once) that says what
// the plugin asked for.
func (i *Instance) attentionError() error {
	i.mu.Lock()
	msg := i.report.Message
	i.mu.Unlock()
	if msg == "" {
		msg = "see the status page"
	}
	return channel.Errorf(channel.CodeUnauthorized, "plugin %s needs attention: %s", i.spec.Instance, msg)
}

// Retry asks the plugin to try again what its Attention's Retry label
// names ("Show a new QR code"). It fails with ErrNoRetry unless the
// instance needs attention with a Retry label; a *channel.Error from the
// plugin says why it cannot. The outcome shows in the plugin's next report.
func (i *Instance) Retry(ctx context.Context) error {
	i.mu.Lock()
	plug, up, state, att := i.plug, i.up, i.state, i.report.Attention
	i.mu.Unlock()
	if !up || state != StateNeedsAttention || att == nil || att.Retry == "" {
		return fmt.Errorf("retry plugin %s: %w (state %s)", i.spec.Instance, ErrNoRetry, state)
	}
	if err := plug.Retry(ctx); err != nil {
		return fmt.Errorf("retry plugin %s: %w", i.spec.Instance, err)
	}
	i.log.Info("operator asked the plugin to retry", "retry", att.Retry)
	return nil
}

// Retry calls [Instance.Retry] of the named instance; ErrUnknownInstance
// when there is none.
func (h *Supervisor) Retry(ctx context.Context, instance string) error {
	inst := h.Instance(instance)
	if inst == nil {
		return fmt.Errorf("retry plugin %s: %w", instance, ErrUnknownInstance)
	}
	return inst.Retry(ctx)
}

// Restart ends the instance's plugin process (SIGTERM): the supervisor
// starts it again as after a crash (the status page's Restart).
func (h *Supervisor) Restart(instance string) error {
	inst := h.Instance(instance)
	if inst == nil {
		return fmt.Errorf("restart plugin %s: %w", instance, ErrUnknownInstance)
	}
	pid := inst.Status().PID
	if pid <= 0 {
		return fmt.Errorf("restart plugin %s: it is not running (%s)", instance, inst.Status().State)
	}
	return syscall.Kill(pid, syscall.SIGTERM)
}
