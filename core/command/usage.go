package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/export"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
	"github.com/clawhost/clawhost/sdk/channel"
)

// The team group: what turns cost (/usage), the session as a file
// (/export).
var (
	cmdUsage = &builtin{name: "usage", help: "what turns cost: you and this chat, today / 7 / 30 days (owners: all, @person)",
		run: func(h *Handler, c call) string { return h.usage(c) }}
	cmdExport = &builtin{name: "export", help: "this chat's session as a Markdown file (owners; in a direct chat, its sender)",
		run: func(h *Handler, c call) string { return h.export(c) }}
)

// Exporter writes a session's export (/export).
type Exporter interface {
	// Export writes session key's Markdown file where its reply may send
	// it from (a MEDIA: line) and says how many messages it holds.
	Export(ctx context.Context, key sessionkey.Key) (path string, messages int, err error)
}

// export answers /export: the session's file, sent with the reply (through
// the outbox, so it arrives once). Owners may export any chat's session;
// in a direct chat its own sender may too.
func (h *Handler) export(c call) string {
	if !c.who.Owner && c.m.ChatType != channel.ChatDirect {
		h.auditCommand(c.ctx, c.m, Invocation{Spec: Spec{Name: "export"}}, "refused", "owners only in a group")
		return "In a group only an owner can export the session."
	}
	h.auditCommand(c.ctx, c.m, Invocation{Spec: Spec{Name: "export"}}, "allowed", "")
	if h.Exporter == nil {
		return "Export is not available."
	}
	path, n, err := h.Exporter.Export(c.ctx, c.key)
	switch {
	case errors.Is(err, export.ErrNoTranscript):
		return "Nothing to export: this chat has no conversation yet."
	case err != nil:
		h.Logger.Error("/export failed", "session", c.key.String(), "error", err)
		return "The export could not be written; see the gateway log."
	}
	return fmt.Sprintf("This session as Markdown (%d messages).\nMEDIA:%s", n, path)
}

// maxNameLookup bounds the chat's messages /usage @name reads.
const maxNameLookup = 2000

// namedInChat are the senders ("<instance>:<id>") of this chat's messages
// since since whose @username or display name is name (case-insensitive),
// in order of first appearance; nil when the store keeps no history.
func (h *Handler) namedInChat(c call, name string, since time.Time) []string {
	hs, ok := h.Store.(store.History)
	if !ok || name == "" {
		return nil
	}
	entries, err := hs.ChatHistory(c.ctx, store.HistoryFilter{Instance: c.m.Instance, ChatID: c.m.ChatID, Since: since}, maxNameLookup)
	if err != nil {
		h.Logger.Warn("/usage: reading the chat's history failed", "error", err)
		return nil
	}
	var ids []string
	for _, e := range entries {
		m, err := message.Decode(e.Message)
		if err != nil || m.Sender.ID == "" {
			continue
		}
		if strings.EqualFold(strings.TrimPrefix(m.Sender.Username, "@"), name) || strings.EqualFold(m.Sender.Name, name) {
			if id := m.Instance + ":" + m.Sender.ID; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// usageTop is how many people, chats and agents /usage all lists.
const usageTop = 10

// usage answers /usage: the sender's own turns and (for who controls the
// session) this chat's, today and over 7 and 30 days; owners see every
// person, chat and agent (/usage all) or one person (/usage @id, /usage
// tg:id).
func (h *Handler) usage(c call) string {
	loc := time.Local
	if h.Location != nil && h.Location() != nil {
		loc = h.Location()
	}
	now := h.Now()
	w := usage.Windows(now, loc)
	arg := strings.TrimSpace(c.args)
	if arg != "" && !c.who.Owner {
		return "Only an owner can see other people's usage (/usage all, /usage @person). /usage shows yours."
	}
	rows, err := h.Store.ListUsage(c.ctx, store.UsageFilter{Since: w[2]}, 0)
	if err != nil {
		h.Logger.Error("/usage: reading the usage ledger failed", "error", err)
		return "The usage ledger cannot be read right now; try again later."
	}
	var b strings.Builder
	window := func(title string, f store.UsageFilter) {
		var sel []store.TurnUsage
		for _, u := range rows {
			if f.Matches(u) {
				sel = append(sel, u)
			}
		}
		s := usage.Sums(sel, w)
		fmt.Fprintf(&b, "%s — today %s · 7 days %s · 30 days %s\n", title, usage.Line(s[0]), usage.Line(s[1]), usage.Line(s[2]))
	}
	switch {
	case arg == "":
		b.WriteString("Usage (each turn's own cost; days of " + loc.String() + "):\n")
		window("You ("+c.m.From+")", store.UsageFilter{Sender: c.m.From})
		if c.who.Control {
			window("This chat", store.UsageFilter{Instance: c.m.Instance, ChatID: c.m.ChatID})
		}
	case arg == "all":
		b.WriteString("Usage, last 30 days (each turn's own cost):\n")
		window("Everyone", store.UsageFilter{})
		for _, g := range []struct{ by, title string }{{usage.ByPerson, "People"}, {usage.ByChat, "Chats"}, {usage.ByAgent, "Agents"}} {
			list := usage.Group(rows, g.by, loc)
			fmt.Fprintf(&b, "%s:\n", g.title)
			for i, r := range list {
				if i == usageTop {
					fmt.Fprintf(&b, "  … and %d more (clawhost usage -by %s)\n", len(list)-usageTop, g.by)
					break
				}
				fmt.Fprintf(&b, "  %s — %s\n", r.Key, usage.Line(r.UsageSum))
			}
		}
	default:
		who := strings.TrimPrefix(arg, "@")
		if !strings.Contains(who, ":") {
			who = c.m.Instance + ":" + who
		}
		if !slices.ContainsFunc(rows, func(u store.TurnUsage) bool { return u.Sender == who }) && strings.HasPrefix(arg, "@") {
			// A name the chat shows (@username, or a display name):
			// the people who wrote here under it.
			switch ids := h.namedInChat(c, strings.TrimPrefix(arg, "@"), w[2]); len(ids) {
			case 0:
			case 1:
				who = ids[0]
			default:
				return fmt.Sprintf("%s names %d people in this chat: %s. Ask with one of them (/usage @id).", arg, len(ids), strings.Join(ids, ", "))
			}
		}
		if !slices.ContainsFunc(rows, func(u store.TurnUsage) bool { return u.Sender == who }) {
			// The ledger names people by id: an @username matches nobody,
			// and a bare $0.00 would read as "spent nothing".
			return fmt.Sprintf("No turns by %s in the last 30 days. /usage @person takes the id /whoami shows (/usage @12345 or /usage tg:12345), or the @username or name of someone who wrote in this chat; /usage all lists everyone.", who)
		}
		b.WriteString("Usage (each turn's own cost; days of " + loc.String() + "):\n")
		window(who, store.UsageFilter{Sender: who})
	}
	return strings.TrimRight(b.String(), "\n")
}
