package session

import (
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/internal/queuemode"
)

// QueueMode says what a message does when its session is busy; core/queue
// implements them. The list is core/internal/queuemode's, which the
// configuration checks queue.mode against too.
type QueueMode = queuemode.Mode

// The queue modes (queuemode's; to add one, see there).
const (
	QueueFollowup  = queuemode.Followup
	QueueCollect   = queuemode.Collect
	QueueInterrupt = queuemode.Interrupt
	QueueSteer     = queuemode.Steer
)

// QueueModes are the queue modes, in the order they are offered.
var QueueModes = queuemode.All

// queueAliases are the other names OpenClaw accepts for its queue modes
// (shared/reference/openclaw-behaviour.md §1.10): the legacy "queue" is
// steer, and "steer-backlog" — steer now and keep the message for a
// follow-up — is followup there too.
var queueAliases = map[string]QueueMode{
	"steering": QueueSteer, "queue": QueueSteer,
	"follow-ups": QueueFollowup, "followups": QueueFollowup, "follow-up": QueueFollowup,
	"steer-backlog": QueueFollowup, "steer+backlog": QueueFollowup,
	"coalesce":   QueueCollect,
	"interrupts": QueueInterrupt, "abort": QueueInterrupt,
}

// ParseQueueMode parses a queue mode or one of OpenClaw's aliases of it,
// ignoring case and surrounding space; "" stays "" (no mode chosen).
func ParseQueueMode(s string) (QueueMode, error) {
	if m, ok := queueAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return m, nil
	}
	return parse(s, QueueModes, "queue mode")
}

// Effort is how hard claude thinks (claude's --effort).
type Effort string

// The effort levels.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortMax    Effort = "max"
)

// Efforts are the effort levels, lowest first.
var Efforts = []Effort{EffortLow, EffortMedium, EffortHigh, EffortMax}

// thinkLevels map OpenClaw's thinking levels (/think off|minimal|low|
// medium|high|xhigh) onto claude's effort levels. claude's --effort has no
// "off": the least thinking it offers is low.
var thinkLevels = map[string]Effort{
	"off": EffortLow, "minimal": EffortLow, "min": EffortLow,
	"xhigh": EffortMax, "ultra": EffortMax, "highest": EffortMax,
}

// ParseEffort parses an effort level or one of OpenClaw's thinking levels,
// ignoring case and surrounding space; "" stays "" (claude's default).
func ParseEffort(s string) (Effort, error) {
	if e, ok := thinkLevels[strings.ToLower(strings.TrimSpace(s))]; ok {
		return e, nil
	}
	return parse(s, Efforts, "effort")
}

func parse[T ~string](s string, set []T, what string) (T, error) {
	v := T(strings.ToLower(strings.TrimSpace(s)))
	if v == "" {
		return "", nil
	}
	for _, m := range set {
		if m == v {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown %s %q (%s)", what, s, Join(set, ", "))
}

// Join joins the names of a closed set with sep ("followup|collect|…").
func Join[T ~string](set []T, sep string) string {
	names := make([]string, len(set))
	for i, v := range set {
		names[i] = string(v)
	}
	return strings.Join(names, sep)
}
