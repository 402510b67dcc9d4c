// Package queue owns the per-session queue: the typed queue modes and drop
// policies, admission of a batch against a running turn (followup,
// collect, interrupt, steer), the cap and what it drops, which entries the
// next turn takes, and the lanes that run one turn at a time per session.
//
// It is the only place that knows per-session order. The queue itself is
// the journal (the session's queued entries, oldest first); a lane is the
// in-memory run state over it. [Ordered] serializes the work of one
// conversation before the queue (the arrival stage), and [Locks] keeps the
// sends of one session from interleaving (core/delivery takes them).
// Nothing else in the core orders work by session: stages run what the
// queue hands them.
//
// To add a queue mode: its constant in core/internal/queuemode (All), and its
// behaviour in [Queue.Enqueue] (against a running turn) and pick (what the
// next turn takes).
package queue

import (
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/session"
)

// Mode says what a message does when the session is busy: the closed set
// of core/session, where a chat's /queue is stored.
type Mode = session.QueueMode

// Queue modes (session.QueueModes).
const (
	// Followup (default) queues the message for the next turn, one turn
	// per message (OpenClaw defaults to steer, which silently merges
	// messages into the running turn; clawhost does not).
	Followup = session.QueueFollowup
	// Collect queues it too; the next turn takes everything waiting, under
	// the "[Queued messages while agent was busy]" header.
	Collect = session.QueueCollect
	// Interrupt aborts the running turn; the next one answers the message.
	Interrupt = session.QueueInterrupt
	// Steer injects the message into the running turn when the agent can;
	// otherwise it behaves as Followup.
	Steer = session.QueueSteer
)

// ParseMode parses a queue mode (session.ParseQueueMode); the empty string
// is Followup.
func ParseMode(s string) (Mode, error) {
	m, err := session.ParseQueueMode(s)
	if m == "" && err == nil {
		return Followup, nil
	}
	return m, err
}

// Drop says which waiting messages go when the queue is full.
type Drop string

// Drop policies.
const (
	// DropOld drops the oldest waiting messages.
	DropOld Drop = "old"
	// DropNew drops the newest.
	DropNew Drop = "new"
	// DropSummarize (default) drops the oldest but keeps a one-line summary
	// of each for the next turn's prompt.
	DropSummarize Drop = "summarize"
)

// ParseDrop parses a drop policy; the empty string is DropSummarize.
func ParseDrop(s string) (Drop, error) {
	switch d := Drop(strings.ToLower(strings.TrimSpace(s))); d {
	case "":
		return DropSummarize, nil
	case DropOld, DropNew, DropSummarize:
		return d, nil
	}
	return "", fmt.Errorf("unknown queue drop policy %q (old, new, summarize)", s)
}

// DefaultCap bounds the waiting messages of one session.
const DefaultCap = 20

// Policy is the queue's configuration.
type Policy struct {
	// Mode applies to every instance not in ByInstance.
	Mode       Mode
	ByInstance map[string]Mode
	// Cap bounds waiting messages per session (zero means DefaultCap);
	// Drop says what goes when it is exceeded.
	Cap  int
	Drop Drop
}

// ModeFor returns the mode of an instance.
func (p Policy) ModeFor(instance string) Mode {
	if m := p.ByInstance[instance]; m != "" {
		return m
	}
	if p.Mode == "" {
		return Followup
	}
	return p.Mode
}

func (p Policy) withDefaults() Policy {
	if p.Mode == "" {
		p.Mode = Followup
	}
	if p.Cap <= 0 {
		p.Cap = DefaultCap
	}
	if p.Drop == "" {
		p.Drop = DropSummarize
	}
	return p
}
