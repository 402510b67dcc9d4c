package turn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/hook"
)

// AbortHint prefixes the first prompt after an aborted run (OpenClaw's
// wording, seed 000).
const AbortHint = "Note: The previous agent run was aborted by the user. Resume carefully or ask for clarification."

// prompt builds the turn's user message with the hooks' context before it,
// and the hooks' extra system prompt.
func (t *Turns) prompt(ctx context.Context, set Settings, req Request, sess store.Session, msgs []message.Message, fresh bool) (prompt, system string) {
	prompt = t.buildPrompt(set, sess, req.Entries[0].ID, msgs, req.Collected, req.Summaries)
	prepend, system := t.hooks(ctx, set, t.hookRequest(set, req.Key.String(), sess, msgs, fresh))
	if prepend != "" {
		prompt = prepend + "\n\n" + prompt
	}
	if len(msgs) > 0 {
		if sec := t.section(set, req.Key, &msgs[len(msgs)-1]); sec != "" {
			system = strings.TrimSpace(sec + "\n\n" + system)
		}
	}
	return prompt, system
}

// envelopeOf renders one message as the agent sees it:
// "[Channel From +elapsed Timestamp] Sender: body", with the quoted message
// and the paths of downloaded media after it. Header parts are sanitized and
// body lines that open with '[' are escaped, so a user cannot forge a
// header.
func (t *Turns) envelopeOf(set Settings, m *message.Message, previous time.Time) string {
	body := m.Body
	if m.Forward != nil {
		// Someone else's text, shown by the sender: untrusted, and never
		// a reset trigger.
		body = "(forwarded a message)"
		if q := envelope.UntrustedBlock(t.opts.BoundaryID(), envelope.Untrusted{
			Source: envelope.SourceForwarded, From: m.Forward.From, Body: neutralized(m.Body),
		}); q != "" {
			body += "\n\n" + q
		}
	} else if rest, ok := session.SplitPlan(m.Command()); ok {
		// "/plan text": the turn runs in plan mode; the agent gets the
		// text.
		body = rest
	} else if _, _, rest, ok := session.SplitDirective(m.Command()); ok {
		// "/model opus explain this": the gateway applied the directive;
		// the agent gets the text.
		body = rest
	} else if trig := t.MatchTrigger(body); trig.Triggered {
		body = trig.Payload
		// "/new sonnet text": the model word set the model; the agent
		// gets the text.
		if _, rest, ok := sessionreset.ModelHint(body, set.Models); ok {
			body = rest
		}
	}
	if m.Forward == nil {
		body = envelope.NeutralizeBody(body)
	}
	if r := m.ReplyTo; r != nil {
		own := r.SenderID != "" && r.SenderID == m.Sender.ID
		switch {
		case r.ToBot || own:
			// The bot's own words, or the sender's: theirs to quote.
			sender := r.SenderName
			if r.ToBot {
				sender = "you (the assistant)"
			}
			if q := envelope.ReplyContext(envelope.ReplyTo{Sender: sender, ID: r.MessageID, Body: r.Text}); q != "" {
				body += "\n\n" + q
			}
		default:
			// Someone else's text: the sender chose to show it, but did
			// not write it.
			if q := envelope.UntrustedBlock(t.opts.BoundaryID(), envelope.Untrusted{
				Source: envelope.SourceReply, From: r.SenderName, Body: neutralized(r.Text),
			}); q != "" {
				body += "\n\n" + q
			}
		}
	}
	for _, md := range m.Media {
		if md.Path != "" {
			body += fmt.Sprintf("\n[Attached %s: %s]", md.Kind, envelope.SanitizeHeaderPart(md.Path))
		} else {
			body += fmt.Sprintf("\n[Attached %s could not be downloaded]", md.Kind)
		}
	}
	name := senderName(m)
	from := envelope.FromLabel(envelope.FromLabelParams{
		IsGroup: m.IsGroup(), GroupLabel: m.ChatTitle, GroupID: m.ChatID,
		DirectLabel: name, DirectID: m.Sender.ID,
	})
	return envelope.FormatInbound(envelope.Inbound{
		Header:   envelope.Header{Channel: t.channelLabel(m.Instance, m.Channel), From: from, Timestamp: m.Timestamp, Previous: previous},
		ChatType: envelope.ChatType(m.ChatType),
		Sender:   envelope.Sender{Name: m.Sender.Name, Username: m.Sender.Username, ID: m.Sender.ID},
	}, body, set.Envelope)
}

// senderName is how the envelope names the sender of m.
func senderName(m *message.Message) string {
	switch {
	case m.Sender.Name != "":
		return m.Sender.Name
	case m.Sender.Username != "":
		return m.Sender.Username
	}
	return m.Sender.ID
}

// neutralized is text with every line that opens with '[' escaped, the
// first one included (envelope.NeutralizeBody spares the first line: it
// follows a header there).
func neutralized(text string) string {
	return envelope.NeutralizeBody("\n" + text)[1:]
}

// groupIntro opens a group session's first prompt (OpenClaw's group
// intro): where claude is, who wrote so far, when it is asked, and that it
// may stay quiet.
func groupIntro(set Settings, last *message.Message, msgs []message.Message, hist []envelope.HistoryEntry) string {
	var names []string
	add := func(n string) {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(names, n) && len(names) < 12 {
			names = append(names, n)
		}
	}
	for _, h := range hist {
		add(h.From)
	}
	for i := range msgs {
		add(msgs[i].Sender.Name)
	}
	where := "this group"
	if last.ChatTitle != "" {
		where = fmt.Sprintf("the group %q", last.ChatTitle)
	}
	b := "System: This is your first turn in " + where + "."
	if len(names) > 0 {
		b += " Written here so far by: " + strings.Join(names, ", ") + "."
	}
	if set.RequireMention != nil && set.RequireMention(last) {
		b += " You are asked when someone mentions you or replies to you; the other messages are context."
	} else {
		b += " You see every message here; most are not for you."
	}
	return b + " When a message is not for you, or you have nothing to add, reply NO_REPLY and stay quiet."
}

// buildPrompt assembles the user message of a turn: abort hint, summaries
// of dropped messages, group history, the message(s) in their envelopes
// (collect mode: under the queued-messages header) and the sender metadata
// in an untrusted block.
func (t *Turns) buildPrompt(set Settings, sess store.Session, entry int64, msgs []message.Message, collected bool, dropped []string) string {
	prev := t.lastMessageTime(sess)
	envs := make([]string, len(msgs))
	for i := range msgs {
		envs[i] = t.envelopeOf(set, &msgs[i], prev)
		prev = msgs[i].Timestamp
	}
	var current string
	switch {
	case len(envs) == 1:
		current = envs[0]
	case collected:
		current = envelope.QueuedMessages(envs)
	default:
		current = strings.Join(envs, "\n")
	}
	last := &msgs[len(msgs)-1]
	var hist []envelope.HistoryEntry
	if last.IsGroup() && set.GroupHistoryLimit > 0 {
		if hist = t.history.Take(HistoryKey(last)); len(hist) > 0 {
			current = envelope.GroupHistoryMarked(hist, current, t.opts.BoundaryID)
		}
	}
	if sess.Turns == 0 && len(last.ThreadContext) > 0 {
		current = t.threadContext(set, last, current)
	}
	var parts []string
	if last.IsGroup() && sess.Turns == 0 {
		parts = append(parts, groupIntro(set, last, msgs, hist))
	}
	if events := t.meta().Of(sess).PendingEvents(entry); len(events) > 0 {
		// What changed since claude's last turn, once each (OpenClaw's
		// system events): the session update ending this turn marks them
		// as this entry's, so only a re-run of this entry carries them again.
		lines := make([]string, len(events))
		for i, e := range events {
			lines[i] = "System: " + e.Text
		}
		parts = append(parts, strings.Join(lines, "\n"))
	}
	if sess.AbortHint {
		parts = append(parts, AbortHint)
	}
	if len(dropped) > 0 {
		parts = append(parts, "[Messages dropped while the queue was full - summaries]\n"+strings.Join(dropped, "\n"))
	}
	parts = append(parts, current)
	meta := map[string]string{"sender_name": last.Sender.Name, "sender_username": last.Sender.Username}
	if last.IsGroup() {
		meta["chat_title"] = last.ChatTitle
	}
	if md := envelope.UntrustedMetadata(meta); md != "" {
		parts = append(parts, md)
	}
	return strings.Join(parts, "\n\n")
}

// hooks calls every before_agent_start hook concurrently, each bounded by
// the hook timeout, and merges their context in config order; a failing or
// slow hook is logged and skipped — the turn goes on.
func (t *Turns) hooks(ctx context.Context, set Settings, req hook.Request) (prepend, system string) {
	if t.opts.Hooks == nil {
		return "", ""
	}
	res := make([]hook.Response, len(set.HookOrder))
	var wg sync.WaitGroup
	for idx, name := range set.HookOrder {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok, err := t.opts.Hooks.BeforeAgentStart(ctx, name, req, set.HookTimeout)
			if err != nil {
				t.log.Warn("before_agent_start hook failed; skipped", "hook", name, "error", err)
				return
			}
			if ok {
				res[idx] = r
			}
		}()
	}
	wg.Wait()
	var pre, sys []string
	for _, r := range res {
		if s := strings.TrimSpace(r.PrependContext); s != "" {
			pre = append(pre, s)
		}
		if s := strings.TrimSpace(r.SystemPrompt); s != "" {
			sys = append(sys, s)
		}
	}
	return strings.Join(pre, "\n\n"), strings.Join(sys, "\n\n")
}
