package config

import "github.com/clawhost/clawhost/core/internal/queuemode"

// Defaults of the queue block.
const (
	DefaultQueueMode = string(queuemode.Followup)
	DefaultQueueCap  = 20
	DefaultQueueDrop = "summarize"
)

// QueueDrops are the values queue.drop accepts. Those of queue.mode (and a
// plugin's queue_mode) are core/internal/queuemode's, the list
// core/session types.
var QueueDrops = []string{"summarize", "old", "new"}

// Queue is the queue {} block: what happens to messages that arrive while
// the session's agent turn is still running.
type Queue struct {
	// Mode is what a message arriving during a turn does (mode):
	// "followup" — it waits and runs as the next turn, one turn per
	// message; "collect" — the waiting messages run together as one turn;
	// "interrupt" — the running turn is stopped and the new message runs;
	// "steer" — it is passed to the running turn. Default "followup".
	Mode string `hcl:"mode,optional"`

	// Cap is how many messages may wait per session (cap); beyond it Drop
	// decides. At least 1. Default 20.
	Cap int `hcl:"cap,optional"`

	// Drop decides what happens when Cap messages are waiting (drop):
	// "summarize" — the oldest are dropped, each leaving a one-line summary
	// for the next turn; "old" — the oldest are dropped; "new" — the new
	// message is dropped. Default "summarize".
	Drop string `hcl:"drop,optional"`

	// Debounce holds a conversation's inbound messages until it has been
	// quiet this long, then handles them together (debounce), e.g. "1500ms"
	// for people who send one thought in several messages. Empty (the default) or "0s"
	// turns it off; when set it must not be negative. A plugin's debounce
	// overrides it for that instance.
	Debounce Duration `hcl:"debounce,optional"`
}

func defaultQueue() *Queue {
	return &Queue{Mode: DefaultQueueMode, Cap: DefaultQueueCap, Drop: DefaultQueueDrop}
}

func (q *Queue) check(k *checker) {
	k.enum("mode", q.Mode, queuemode.Names())
	k.atLeast("cap", q.Cap, 1)
	k.enum("drop", q.Drop, QueueDrops)
	k.optionalDuration("debounce", q.Debounce)
}
