package command

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// The session group: a new session, stopping the running reply, earlier
// sessions, compaction.
var (
	cmdNew = &builtin{name: "new", help: "start a new session (text after it is its first message)", needs: control, run: reset}
	// /reset is /new.
	cmdReset = &builtin{name: "reset", help: "same as /new", needs: control, run: reset}
	cmdStop  = &builtin{name: "stop", help: "stop the running reply and clear the queue", needs: control,
		run: func(h *Handler, c call) string { return stopText(h.Sessions.Stop(c.key)) }}
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
	// /plan <text> is a turn of the session in plan mode (the gateway
	// queues it like a message; the turn strips "/plan"); alone it is
	// answered here.
	cmdPlan = &builtin{name: session.PlanCommand, help: "plan first: /plan <what to do> — claude plans without changing anything, then asks you to Approve or Keep planning",
		run: func(*Handler, call) string {
			return "Write what claude should plan: /plan add a login page. It plans without changing anything and shows you the plan, with Approve and Keep planning."
		}}
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
	h.Sessions.Reset(c.key, c.m, "/"+c.name)
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

// list answers /list: the chat's current and earlier sessions, each with
// its name (/name), claude's own title, its dates and turns.
func (h *Handler) list(ctx context.Context, key sessionkey.Key) string {
	past, err := h.Sessions.Past(ctx, key)
	if err != nil {
		return "The sessions could not be read; try again."
	}
	cur, ok, err := h.Sessions.Current(ctx, key)
	if err != nil {
		return "The sessions could not be read; try again."
	}
	var b strings.Builder
	if ok {
		fmt.Fprintf(&b, "This session: %s\n", h.sessionLine(cur))
	}
	if len(past) == 0 {
		b.WriteString("No earlier sessions in this chat (/new starts one and keeps this one here).")
		return b.String()
	}
	b.WriteString("Earlier sessions (/switch N or /switch NAME goes back to one; this one is kept):\n")
	for i, p := range past {
		fmt.Fprintf(&b, "%d. %s\n", i+1, h.sessionLine(p))
	}
	return strings.TrimSpace(b.String())
}

// sessionLine is one session of /list: its name and claude's title, when
// it started and was last used, its turns and short id.
func (h *Handler) sessionLine(p session.PastSession) string {
	var label string
	switch {
	case p.Name != "" && p.Title != "" && p.Title != p.Name:
		label = fmt.Sprintf("%q (%s), ", p.Name, p.Title)
	case p.Name != "":
		label = fmt.Sprintf("%q, ", p.Name)
	case p.Title != "":
		label = p.Title + ", "
	}
	return fmt.Sprintf("%sstarted %s, last %s, %d turns (%s)", label, p.Started.Format("2006-01-02 15:04"), p.Last.Format("2006-01-02 15:04"), p.Turns, shortID(p.ID))
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// switchTo answers /switch N or /switch NAME (a session's /name, or the
// start of it or of claude's title, case ignored).
func (h *Handler) switchTo(ctx context.Context, key sessionkey.Key, arg string) string {
	n, err := strconv.Atoi(arg)
	if err != nil && arg != "" {
		n, err = h.pastByName(ctx, key, arg)
		if err != nil {
			return "Not switched: " + err.Error() + "."
		}
	}
	if err != nil {
		return "Usage: /switch N or /switch NAME, from /list."
	}
	p, err := h.Sessions.Switch(ctx, key, n)
	if err != nil {
		return "Not switched: " + err.Error() + "."
	}
	return fmt.Sprintf("Switched to the session started %s (%d turns); the conversation goes on from there.", p.Started.Format("2006-01-02 15:04"), p.Turns)
}

// pastByName is the number in /list of the earlier session name names: the
// one whose name is name, else the only one whose name or title starts
// with it.
func (h *Handler) pastByName(ctx context.Context, key sessionkey.Key, name string) (int, error) {
	past, err := h.Sessions.Past(ctx, key)
	if err != nil {
		return 0, err
	}
	low := strings.ToLower(name)
	var hits []int
	for i, p := range past {
		if strings.EqualFold(p.Name, name) {
			return i + 1, nil
		}
		if p.Name != "" && strings.HasPrefix(strings.ToLower(p.Name), low) || p.Title != "" && strings.HasPrefix(strings.ToLower(p.Title), low) {
			hits = append(hits, i+1)
		}
	}
	switch len(hits) {
	case 0:
		return 0, fmt.Errorf("no earlier session is named %q (/list shows them)", name)
	case 1:
		return hits[0], nil
	}
	return 0, fmt.Errorf("%d earlier sessions match %q: use its number from /list", len(hits), name)
}
