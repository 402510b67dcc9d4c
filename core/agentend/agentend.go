// Package agentend delivers the agent_end event — a finished turn's
// outcome, reply, usage, tool steps and duration — to the agent_end hook
// plugins, off the reply's path: Notify returns at once, and each hook
// gets the event in the background, at least once (a failed or timed-out
// call is repeated with the same call id, with backoff, a bounded number
// of times).
//
// An event waiting for its hooks is kept in a spool directory (one 0600
// file per event, named by its call id, removed once every hook answered
// or was given up): the next start delivers what a stop or a crash left
// there again, with the same call id. The file is written in the
// background, right after the reply was recorded; an event is lost only
// when the host dies in between.
package agentend

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	spool   string
	wg      sync.WaitGroup
	pending chan struct{}
}

// New returns a notifier; its deliveries end when ctx does (Wait waits
// for them). spool is the directory of the events in flight (made 0700
// when needed); "" keeps them in memory only.
func New(ctx context.Context, hooks Hooks, clock tstime.Clock, log hclog.Logger, spool string) *Notifier {
	return &Notifier{hooks: hooks, clock: clock, log: log.Named("agent_end"), ctx: ctx, spool: spool, pending: make(chan struct{}, MaxPending)}
}

// spooled is an event in the spool: the hooks still to call and the event.
type spooled struct {
	Hooks []string `json:"hooks"`
	End   hook.End `json:"end"`
}

// spoolPath is the file of the event with call id id ("" without a spool).
func (n *Notifier) spoolPath(id string) string {
	if n.spool == "" || id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
		return ""
	}
	return filepath.Join(n.spool, id+".json")
}

// keep writes an event to the spool; a failure is logged (the event is
// still delivered while the host runs).
func (n *Notifier) keep(path string, ev spooled) {
	b, err := json.Marshal(ev)
	if err == nil {
		if err = os.MkdirAll(n.spool, 0o700); err == nil {
			err = os.WriteFile(path+".tmp", b, 0o600)
		}
		if err == nil {
			err = os.Rename(path+".tmp", path)
		}
	}
	if err != nil {
		n.log.Warn("agent_end event not kept for a restart", "call_id", ev.End.CallID, "error", err)
	}
}

// Resume delivers again, in the background, the events a stop or a crash
// left in the spool, to those of their hooks that set still lists.
func (n *Notifier) Resume(set Settings) {
	if n.spool == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(n.spool, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		var ev spooled
		if err == nil {
			err = json.Unmarshal(b, &ev)
		}
		if err != nil || n.spoolPath(ev.End.CallID) != f {
			n.log.Warn("unreadable agent_end event removed from the spool", "file", f, "error", err)
			_ = os.Remove(f)
			continue
		}
		var hooks []string
		for _, h := range ev.Hooks {
			if slices.Contains(set.Hooks, h) {
				hooks = append(hooks, h)
			}
		}
		if len(hooks) == 0 {
			_ = os.Remove(f)
			continue
		}
		n.log.Info("delivering an agent_end event again after the restart", "call_id", ev.End.CallID, "hooks", strings.Join(hooks, ","))
		n.start(set, hooks, ev.End, false)
	}
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
	n.start(set, hooks, end, true)
}

// start delivers end to hooks in the background, keeping it in the spool
// (when keep) until every hook answered or was given up.
func (n *Notifier) start(set Settings, hooks []string, end hook.End, keep bool) {
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
		path := n.spoolPath(end.CallID)
		if path != "" && keep {
			n.keep(path, spooled{Hooks: hooks, End: end})
		}
		for _, inst := range hooks {
			if !n.deliver(set, inst, end) {
				return // the host stops: the spool keeps the event
			}
		}
		if path != "" {
			_ = os.Remove(path)
		}
	}()
}

// deliver calls one hook until it answers, at most Attempts times; false
// when the host stopped first.
func (n *Notifier) deliver(set Settings, inst string, end hook.End) bool {
	wait := FirstRetry
	for attempt := 1; ; attempt++ {
		ok, err := n.hooks.AgentEnd(n.ctx, inst, end, set.Timeout)
		if err == nil || !ok {
			return true
		}
		if n.ctx.Err() != nil {
			return false
		}
		if attempt == Attempts {
			n.log.Error("agent_end hook failed; event given up", "hook", inst, "call_id", end.CallID, "attempts", attempt, "error", err)
			return true
		}
		n.log.Warn("agent_end hook failed; trying again", "hook", inst, "call_id", end.CallID, "attempt", attempt, "in", wait, "error", err)
		t, c := n.clock.NewTimer(wait)
		select {
		case <-c:
		case <-n.ctx.Done():
			t.Stop()
			return false
		}
		wait *= 2
	}
}

// Wait waits for the deliveries in flight (they end with the context).
func (n *Notifier) Wait() { n.wg.Wait() }
