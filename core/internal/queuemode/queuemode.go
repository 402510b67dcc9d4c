// Package queuemode is the closed set of queue modes, written once: the
// configuration checks queue.mode (and a plugin's queue_mode) against it
// and core/session types it (session.QueueMode is this Mode). Both are
// leaves, which may not import each other, so the list lives here, below
// them. What a mode does is core/queue's.
package queuemode

// Mode says what a message does when its session is busy.
type Mode string

// The queue modes. To add one: a constant here, in All, and its behaviour
// in core/queue.
const (
	// Followup (the default) queues the message for the next turn, one
	// turn per message.
	Followup Mode = "followup"
	// Collect queues it too; the next turn takes everything waiting.
	Collect Mode = "collect"
	// Interrupt aborts the running turn; the next one answers the message.
	Interrupt Mode = "interrupt"
	// Steer injects the message into the running turn when the agent can;
	// otherwise it behaves as Followup.
	Steer Mode = "steer"
)

// All are the queue modes, in the order they are offered.
var All = []Mode{Followup, Collect, Interrupt, Steer}

// Names are All's names, for a check of a configured string.
func Names() []string {
	out := make([]string, len(All))
	for i, m := range All {
		out[i] = string(m)
	}
	return out
}
