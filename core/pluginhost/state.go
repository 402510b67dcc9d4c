package pluginhost

import (
	"time"

	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/status"
)

// State is the lifecycle state of an instance.
type State string

// States. Every failure is a state the operator sees (status page,
// /status.json, /metrics, `clawhost status`), with what to do in
// [Status.Action].
const (
	// StateStarting: the process is being launched, handshaked, configured.
	StateStarting State = "starting"
	// StateReady: serving.
	StateReady State = "ready"
	// StateDegraded: it crashed or failed to start; it is restarted with
	// backoff. Also the state of a running plugin that reported degraded
	// (it is up and retrying by itself, e.g. the platform is unreachable):
	// that one is not restarted, and takes calls until a send to it fails;
	// then calls wait for it as for a restart (Instance.callable).
	StateDegraded State = "degraded"
	// StateMisconfigured: the plugin rejected its configuration (or the
	// configured sha256 does not match). It is not restarted in a loop; a
	// reload with a fixed block starts it again.
	StateMisconfigured State = "misconfigured"
	// StateMissing: the binary does not exist. One error names the path;
	// a reload (after building or installing it) tries again.
	StateMissing State = "missing"
	// StateUnresponsive: the liveness probe got no answer; the process is
	// killed and restarted (then degraded, starting, ready).
	StateUnresponsive State = "unresponsive"
	// StateStopped: stopped by the host.
	StateStopped State = "stopped"
	// StateNeedsAttention: the plugin runs but reported that it cannot
	// work until a person acts (a rejected token, a device to link); its
	// message is the Action and Status.Attention carries a QR payload, a
	// code or a link. It is not restarted and not ready: sends to it fail
	// at once. It leaves the state when the plugin reports ready (see
	// attention.go).
	StateNeedsAttention State = "needs_attention"
	// StateStandby: a channel plugin that runs but is not configured (it
	// does not poll its platform) because another host sharing the
	// database serves this channel instance (Options.Gate); Message says
	// which. It becomes ready when this host takes the channel over.
	StateStandby State = "standby"
	// StateNoSandbox: the plugin block sets untrusted_input and bubblewrap
	// cannot run here (not installed, or the kernel refuses its
	// namespaces), so the plugin is not started: it never runs
	// unconfined. A reload tries again.
	StateNoSandbox State = "no_sandbox"
)

// settled reports whether a state waits for a reload instead of a restart.
func (s State) settled() bool {
	return s == StateMisconfigured || s == StateMissing || s == StateNoSandbox
}

// runError is why a run ended in a settled state.
type runError struct {
	state State
	err   error
}

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// Status is a snapshot of an instance.
type Status struct {
	Instance, Source string
	State            State
	Restarts         int
	LastError        string
	Since            time.Time
	PID              int
	Description      pluginclient.Description
	// Action tells the operator what to do about State; empty when
	// nothing is needed.
	Action string
	// Message is what the running plugin last reported about itself (its
	// status.Status.Message), exactly as reported; empty when it reported
	// nothing or the instance is not running.
	Message string
	// Attention is what the operator needs to act (a QR payload, a code, a
	// link), exactly as the plugin reported it; set in
	// StateNeedsAttention (possibly nil), and in StateReady when the plugin
	// reported a status.Link: the page it serves (the web chat's, with its
	// token). Its Data may hold a secret: it is never logged.
	Attention *status.Attention
}

// actions are what the operator does about each state.
var actions = map[State]string{
	StateDegraded:      "it restarts by itself with backoff; if it keeps failing, read last_error and the plugin's log lines",
	StateMisconfigured: "fix the instance's plugin block (see last_error), then reload: send SIGHUP to clawhost or restart it",
	StateMissing:       "build or install the binary (make build), or set path in the plugin block, then reload (SIGHUP)",
	StateUnresponsive:  "it was killed and restarts by itself; if it repeats, read the plugin's log lines",
	StateNoSandbox:     "install bubblewrap (apt-get install bubblewrap) and let it make user namespaces (clawhost doctor says how), then reload (SIGHUP); or remove untrusted_input from the plugin block to run it unconfined",
}

// Status returns a snapshot.
func (i *Instance) Status() Status {
	i.mu.Lock()
	defer i.mu.Unlock()
	st := Status{Instance: i.spec.Instance, Source: i.spec.Source, State: i.state, Restarts: i.restarts, Since: i.since, PID: i.pid, Description: i.desc, Action: actions[i.state]}
	if i.lastErr != nil {
		st.LastError = i.lastErr.Error()
	}
	i.reported(&st)
	if i.state == StateStandby {
		st.Action, st.Message = standbyAction, i.standby
		if i.standby != "" {
			st.Action = standbyAction + " (" + i.standby + ")"
		}
	}
	return st
}

func (i *Instance) setState(s State, err error) {
	i.mu.Lock()
	prev, was := i.state, i.callable()
	i.state, i.since = s, i.h.opts.Clock.Now()
	if err != nil {
		i.lastErr = err
	}
	if s != prev {
		i.sendFailed = false
	}
	i.syncReady(was)
	if s == StateStopped {
		select {
		case <-i.readyCh:
		default:
			close(i.readyCh)
		}
	}
	i.mu.Unlock()
	switch {
	case s == StateDegraded || s.settled() || s == StateUnresponsive:
		i.log.Error("plugin "+string(s), "state", s, "error", err)
	case prev != s:
		i.log.Info("plugin state", "state", s)
	}
}

// callable says whether calls go to the instance now; i.mu is held. A
// ready one takes them, and so does one whose process is up but reported
// degraded (it retries what it depends on by itself, e.g. Telegram's
// polls fail): the plugin may still send, and holding every reply until
// its polls recover delayed replies for as long as they failed, then lost
// them after delivery's ready waits. Once a send to it failed
// (notedSendFailed), calls wait for it to be ready again, as for a
// restart, so a platform that is really unreachable keeps delivery's
// bound.
func (i *Instance) callable() bool {
	return i.state == StateReady || i.state == StateDegraded && i.up && !i.sendFailed
}

// syncReady keeps readyCh closed exactly while the instance is callable,
// given whether it was before the change; i.mu is held.
func (i *Instance) syncReady(was bool) {
	switch now := i.callable(); {
	case now && !was:
		close(i.readyCh)
	case !now && was:
		i.readyCh = make(chan struct{})
	}
}

// notedSendFailed records that a send to the instance failed with an
// error that may pass, when it is degraded (callable).
func (i *Instance) notedSendFailed() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.state != StateDegraded {
		return
	}
	was := i.callable()
	i.sendFailed = true
	i.syncReady(was)
}
