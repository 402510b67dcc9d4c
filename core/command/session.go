package command

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/core/sessionkey"
)

// The session group: a new session, stopping the running reply, earlier
// sessions, compaction.
var (
	cmdNew = &builtin{name: "new", help: "start a new session (text after it is its first message)", needs: control, run: reset}
	// /reset is /new.
	cmdReset = &builtin{name: "reset", help: "same as /new", needs: control, run: reset}
	cmdStop  = &builtin{name: "stop", help: "stop the running reply and clear the queue", needs: control,
		run: func(h *Handler, c call) string { return stopText(h.Sessions.Stop(c.key.String())) }}
	// /resume ends claude's usage-limit pause now: the parked messages
	// run (and, if the limit still holds, park again).
	cmdResume = &builtin{name: "resume", help: "retry now what claude's usage limit paused (owners)", needs: owner,
		run: func(h *Handler, c call) string {
			if h.Pause == nil || !h.Pause.Resume(c.ctx) {
				return "Nothing is paused."
			}
			return "Resumed: the paused messages run now."
		}}
	// /compact is a turn of the session (the gateway runs it in order
	// with the session's messages); it reaches the handler only to be
	// refused.
	cmdCompact = &builtin{name: "compact", help: "ask claude to compact this conversation into a summary", needs: control,
		run: func(*Handler, call) string { return "" }}
	cmdList = &builtin{name: "list", help: "this chat's earlier sessions",
		run: func(h *Handler, c call) string { return h.list(c.ctx, c.key) }}
	// /detach returns the chat from a terminal claude attached to it
	// (`clawhost channel`) to its own session.
	cmdDetach = &builtin{name: "detach", help: "return this chat from an attached terminal session to its own (owners)", needs: owner,
		run: func(h *Handler, c call) string {
			if h.Detach == nil {
				return "No terminal is attached to this chat."
			}
			return h.Detach(c.key, c.m)
		}}
	cmdSwitch = &builtin{name: "switch", help: "go back to an earlier session: /switch N (from /list)", needs: control,
		run: func(h *Handler, c call) string { return h.switchTo(c.ctx, c.key, strings.TrimSpace(c.args)) }}
)

// reset answers /new and /reset (the gateway handles them as reset
// triggers first; this is the command when the triggers are configured
// away).
func reset(h *Handler, c call) string {
	h.Sessions.Reset(c.key.String(), c.m, "/"+c.name)
	return "New session started."
}

func stopText(aborted bool, dropped int) string {
	switch {
	case aborted && dropped > 0:
		return fmt.Sprintf("Stopped. %d queued message(s) dropped.", dropped)
	case aborted:
		return "Stopped."
	case dropped > 0:
		return fmt.Sprintf("Nothing was running; %d queued message(s) dropped.", dropped)
	}
	return "Nothing is running."
}

// list answers /list: the chat's current and earlier sessions.
func (h *Handler) list(ctx context.Context, key sessionkey.Key) string {
	past, err := h.Sessions.Past(ctx, key.String())
	if err != nil {
		return "The sessions could not be read; try again."
	}
	if len(past) == 0 {
		return "No earlier sessions in this chat (/new starts one and keeps this one here)."
	}
	var b strings.Builder
	b.WriteString("Earlier sessions (/switch N goes back to one; this one is kept):\n")
	for i, p := range past {
		fmt.Fprintf(&b, "%d. started %s, last %s, %d turns (%s)\n", i+1, p.Started.Format("2006-01-02 15:04"), p.Last.Format("2006-01-02 15:04"), p.Turns, shortID(p.ID))
	}
	return strings.TrimSpace(b.String())
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// switchTo answers /switch N.
func (h *Handler) switchTo(ctx context.Context, key sessionkey.Key, arg string) string {
	n, err := strconv.Atoi(arg)
	if err != nil {
		return "Usage: /switch N, with N from /list."
	}
	p, err := h.Sessions.Switch(ctx, key.String(), n)
	if err != nil {
		return "Not switched: " + err.Error() + "."
	}
	return fmt.Sprintf("Switched to the session started %s (%d turns); the conversation goes on from there.", p.Started.Format("2006-01-02 15:04"), p.Turns)
}
