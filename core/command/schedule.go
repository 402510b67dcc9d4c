package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/message"
)

// The schedule group: turns at set times, managed from chat by owners.
var cmdSchedule = &builtin{name: "schedule", help: "turns at set times here: /schedule add NAME MIN HOUR DAY MONTH WEEKDAY text | list | remove NAME (owners)", needs: owner,
	run: func(h *Handler, c call) string { return h.schedule(c.ctx, c.m, strings.TrimSpace(c.args)) }}

// ScheduleEntry is one schedule as /schedule shows it.
type ScheduleEntry struct {
	Name, Cron, Chat, Prompt string
	// Group: the chat is a group.
	Group bool
	// At, for a one-shot entry (the agent's schedule_message), is its
	// time; Cron is empty then.
	At time.Time `json:",omitzero"`
	// FromFile: a schedule block of the configuration (not removable from
	// chat).
	FromFile bool
	// Sender, for an entry that runs in a direct chat, is that chat's
	// sender, "<instance>:<sender id>": revoking their approval drops it.
	// Empty for group chats and for entries stored before it was kept
	// (then the chat, equal to the sender on most platforms, stands in).
	Sender string `json:",omitempty"`
	// Next is the next run, zero if none.
	Next time.Time
}

// Schedules is the port /schedule manages the schedules added from chat
// through; the host implements it (durable, applied at once).
type Schedules interface {
	Add(ctx context.Context, e ScheduleEntry) error
	Remove(ctx context.Context, name string) (bool, error)
	List(ctx context.Context) []ScheduleEntry
}

// schedule answers /schedule (owners): add a schedule running in this chat,
// list them, remove one added from chat.
func (h *Handler) schedule(ctx context.Context, m *message.Message, args string) string {
	if h.Schedules == nil {
		return "Schedules are not available."
	}
	const usage = "Usage: /schedule add NAME MIN HOUR DAY MONTH WEEKDAY text (e.g. /schedule add standup 0 9 * * 1-5 Summarize yesterday), /schedule list, /schedule remove NAME."
	verb, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(verb) {
	case "list", "":
		list := h.Schedules.List(ctx)
		if len(list) == 0 {
			return "No schedules. " + usage
		}
		var b strings.Builder
		for _, e := range list {
			src := "added in chat"
			if e.FromFile {
				src = "config file"
			}
			next := "never"
			if !e.At.IsZero() {
				e.Cron, e.Next = "once", e.At
			}
			if !e.Next.IsZero() {
				next = e.Next.Format("Mon 2006-01-02 15:04 MST")
			}
			fmt.Fprintf(&b, "%s: %q in %s, next %s (%s): %s\n", e.Name, e.Cron, e.Chat, next, src, e.Prompt)
		}
		return strings.TrimSpace(b.String())
	case "add":
		f := strings.Fields(rest)
		if len(f) < 7 {
			return usage
		}
		e := ScheduleEntry{Name: f[0], Cron: strings.Join(f[1:6], " "), Chat: m.Instance + ":" + m.ChatID, Group: m.IsGroup(), Prompt: strings.Join(f[6:], " ")}
		if !m.IsGroup() {
			e.Sender = m.From
		}
		if err := h.Schedules.Add(ctx, e); err != nil {
			return "Not added: " + err.Error()
		}
		return fmt.Sprintf("Schedule %s added: %q, in this chat.", e.Name, e.Cron)
	case "remove", "rm", "delete":
		ok, err := h.Schedules.Remove(ctx, rest)
		switch {
		case err != nil:
			return "Not removed: " + err.Error()
		case !ok:
			return fmt.Sprintf("No schedule %q was added in chat (schedules of the config file are removed there).", rest)
		}
		return fmt.Sprintf("Schedule %s removed.", rest)
	}
	return usage
}
