package approval

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// An answer to a question: who may give it, from which chat, and how a typed reply
// reads.

// Answer takes m as the answer to an open question when it is one: a press
// of a question's button, or — in a chat a question was asked in — a
// typed yes, no or always from someone who may answer. owner: m's sender
// is an owner. handled false: m is an ordinary message. reply, when not
// empty, is said to the chat (the press came too late, or from someone
// who may not answer).
func (a *Approvals) Answer(m *message.Message, owner bool) (handled bool, reply string) {
	name := m.Sender.Name
	if name == "" {
		name = m.From
	}
	if act := m.Action; act != nil && (strings.HasPrefix(act.ButtonID, choicePrefix) || strings.HasPrefix(act.ButtonID, buttonPrefix)) {
		choice := strings.HasPrefix(act.ButtonID, choicePrefix)
		id, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(act.ButtonID, choicePrefix), buttonPrefix), ":")
		a.mu.Lock()
		qu := a.open[id]
		here := qu != nil && qu.askedIn(m)
		a.mu.Unlock()
		if qu == nil || (qu.choices != nil) != choice {
			return true, "This question is no longer open."
		}
		if !here || !qu.may(m, owner) {
			return true, qu.whoMay()
		}
		if choice {
			return true, a.press(qu, rest, name, m.From)
		}
		v, ok := verbs[rest]
		// A plan is answered Approve or Keep planning; a tool use Allow,
		// Deny or (where offered) Always.
		if plan := rest == "y" || rest == keepVerb; !ok || qu.plan && !plan || !qu.plan && (v.keep || v.always && len(qu.rules) == 0) {
			return true, "That answer is not one of the buttons."
		}
		v.by, v.byID = name, m.From
		qu.give(v)
		return true, ""
	}
	if m.Action != nil || strings.TrimSpace(m.Body) == "" || strings.HasPrefix(strings.TrimSpace(m.Command()), "/") {
		// A command (/stop, /status) stays a command while claude waits.
		return false, ""
	}
	a.mu.Lock()
	var oldest *question
	for _, qu := range a.open {
		if qu.askedIn(m) && qu.may(m, owner) && (oldest == nil || qu.since.Before(oldest.since)) {
			oldest = qu
		}
	}
	a.mu.Unlock()
	if oldest == nil {
		return false, ""
	}
	if oldest.choices != nil {
		// While claude waits for a choice, what the person writes is the
		// answer.
		text, picked := oldest.pick(m.Body)
		oldest.give(verdict{text: text, picked: picked, by: name, byID: m.From})
		return true, ""
	}
	if oldest.plan {
		v, ok, always := typedPlan(m.Command())
		if always {
			return true, noAlwaysForPlans
		}
		if !ok && oldest.forOther {
			return false, ""
		}
		if !ok {
			// Words of their own in the turn's chat: the plan goes back,
			// and the message runs after the turn as the feedback on it.
			oldest.give(verdict{keep: true, by: name, byID: m.From})
			return false, ""
		}
		v.by, v.byID = name, m.From
		oldest.give(v)
		return true, ""
	}
	v, ok := typed(m.Command())
	if !ok || (v.always && len(oldest.rules) == 0) {
		return false, ""
	}
	v.by, v.byID = name, m.From
	oldest.give(v)
	return true, ""
}

func (qu *question) give(v verdict) {
	select {
	case qu.answers <- v:
	default: // answered already
	}
}

var verbs = map[string]verdict{"y": {allow: true}, "n": {}, "a": {allow: true, always: true}, keepVerb: {keep: true}}

// typed reads a typed answer: yes / no / always and a few synonyms.
func typed(text string) (verdict, bool) {
	w := strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!?"))
	switch w {
	case "yes", "y", "allow", "ok", "approve":
		return verdict{allow: true}, true
	case "no", "n", "deny", "reject":
		return verdict{}, true
	case "always", "always allow":
		return verdict{allow: true, always: true}, true
	}
	return verdict{}, false
}

// askedIn reports whether the question was sent to m's chat (a.mu held):
// the same chat, or — for a question addressed to a person (an owner's
// direct chat, asked by their sender id) — that person writing in a
// direct chat of the same instance. A platform may deliver a message
// sent to a person's id in a chat with an id of its own (Slack: asked in
// U…, delivered and pressed in the DM D…): the answer is matched to the
// person the question went to, not to a spelling of their chat's id.
func (qu *question) askedIn(m *message.Message) bool {
	for _, s := range qu.asked {
		if asks(s.tgt, m) {
			return true
		}
	}
	for _, t := range qu.targets {
		if asks(t, m) {
			return true
		}
	}
	return false
}

// asks reports whether a question sent to t is answerable by m: m is in
// t, or t is m's sender's direct chat addressed by their id and m comes
// from that person's direct chat.
func asks(t message.Target, m *message.Message) bool {
	if t.Instance != m.Instance || t.ThreadID != m.ThreadID {
		return false
	}
	if t.ChatID == m.ChatID {
		return true
	}
	return m.ChatType == channel.ChatDirect && m.Sender.ID != "" && t.ChatID == m.Sender.ID
}

// may reports whether the sender of m may answer: an owner always; the
// person who started the turn when approvers = "sender", and for claude's
// own multiple-choice questions (an answer there is words for the model,
// like a message, and allows nothing).
func (qu *question) may(m *message.Message, owner bool) bool {
	if owner {
		return true
	}
	return (!qu.ownersOnly || qu.choices != nil) && qu.q.Asker != "" && m.From == qu.q.Asker
}

func (qu *question) whoMay() string {
	if (qu.ownersOnly && qu.choices == nil) || qu.q.Asker == "" {
		return "Only an owner can answer this question."
	}
	return fmt.Sprintf("Only %s or an owner can answer this question.", cmp.Or(qu.q.AskerName, qu.q.Asker))
}
