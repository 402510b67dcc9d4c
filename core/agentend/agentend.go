// Package agentend delivers the agent_end event — a finished turn's
// outcome, reply, usage, tool steps and duration — to the agent_end hook
// plugins, off the reply's path: Notify returns at once, and each hook
// gets the event in the background, at least once (a failed or timed-out
// call is repeated with the same call id, with backoff, a bounded number
// of times while the host runs).
package agentend

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/sdk/hook"
)

// Hooks calls agent_end hook instances.
type Hooks interface {
	// AgentEnd calls instance's hook, the call bounded by timeout; ok is
	// false when the instance is not an agent_end hook.
	AgentEnd(ctx context.Context, instance string, end hook.End, timeout time.Duration) (ok bool, err error)
	// IsEndHook reports whether instance is an agent_end hook, or may be
	// one (it has not described itself yet). It does not block.
	IsEndHook(instance string) bool
}

// Settings are the delivery's configuration.
type Settings struct {
	// Hooks are the enabled plugin instances in config order; those that
	// are not agent_end hooks are passed over.
	Hooks []string
	// Timeout bounds each call (messages.hook_timeout).
	Timeout time.Duration
}

// Attempts bounds the calls of one hook for one event; the waits between
// them double from FirstRetry (1 s, 2 s, … 32 s: about a minute in all).
const (
	Attempts   = 7
	FirstRetry = time.Second
)

// MaxPending bounds the events in flight; beyond it an event is dropped
// and logged (a hook that hangs must not grow the host without bound).
const MaxPending = 1000

// Notifier delivers agent_end events in the background.
type Notifier struct {
	hooks   Hooks
	clock   tstime.Clock
	log     hclog.Logger
	ctx     context.Context
	wg      sync.WaitGroup
	pending chan struct{}
}

// New returns a notifier; its deliveries end when ctx does (Wait waits
// for them).
func New(ctx context.Context, hooks Hooks, clock tstime.Clock, log hclog.Logger) *Notifier {
	return &Notifier{hooks: hooks, clock: clock, log: log.Named("agent_end"), ctx: ctx, pending: make(chan struct{}, MaxPending)}
}

// Notify hands end to every agent_end hook of set, in config order, in the
// background, and returns at once.
func (n *Notifier) Notify(set Settings, end hook.End) {
	var hooks []string
	for _, inst := range set.Hooks {
		if n.hooks.IsEndHook(inst) {
			hooks = append(hooks, inst)
		}
	}
	if len(hooks) == 0 {
		return
	}
	select {
	case n.pending <- struct{}{}:
	default:
		n.log.Warn("too many agent_end events in flight; one dropped", "call_id", end.CallID)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer func() { <-n.pending }()
		for _, inst := range hooks {
			n.deliver(set, inst, end)
		}
	}()
}

// deliver calls one hook until it answers, at most Attempts times.
func (n *Notifier) deliver(set Settings, inst string, end hook.End) {
	wait := FirstRetry
	for attempt := 1; ; attempt++ {
		ok, err := n.hooks.AgentEnd(n.ctx, inst, end, set.Timeout)
		if err == nil || !ok {
			return
		}
		if n.ctx.Err() != nil {
			return
		}
		if attempt == Attempts {
			n.log.Error("agent_end hook failed; event given up", "hook", inst, "call_id", end.CallID, "attempts", attempt, "error", err)
			return
		}
		n.log.Warn("agent_end hook failed; trying again", "hook", inst, "call_id", end.CallID, "attempt", attempt, "in", wait, "error", err)
		t, c := n.clock.NewTimer(wait)
		select {
		case <-c:
		case <-n.ctx.Done():
			t.Stop()
			return
		}
		wait *= 2
	}
}

// Wait waits for the deliveries in flight (they end with the context).
func (n *Notifier) Wait() { n.wg.Wait() }
