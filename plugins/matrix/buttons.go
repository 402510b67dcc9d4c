package matrix

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Matrix has no buttons: a message's buttons become reactions the bot puts
// under it for people to press (✅ Allow, ❌ Deny, ♾ Always, ⏹ Stop, else
// 1️⃣ 2️⃣ …) and a numbered list in its text, so typing the number answers
// too. A press or a number comes back to the host as an Action; the host
// decides whether the person may answer.

// maxQuestions bounds the messages with buttons remembered.
const maxQuestions = 256

var keycaps = []string{"1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣"}

// question is a message with buttons.
type question struct {
	room    id.RoomID
	buttons []channel.Button
	emoji   []string
}

// emojiFor is the reaction of the i-th button.
func emojiFor(b channel.Button, i int) string {
	l := strings.ToLower(b.Label)
	switch {
	case strings.HasPrefix(l, "allow"), strings.HasPrefix(l, "yes"):
		return "✅"
	case strings.HasPrefix(l, "deny"), strings.HasPrefix(l, "no"):
		return "❌"
	case strings.HasPrefix(l, "always"):
		return "♾️"
	case strings.HasPrefix(l, "stop"):
		return "⏹️"
	}
	if i < len(keycaps) {
		return keycaps[i]
	}
	return strconv.Itoa(i + 1)
}

// withButtons is the question of rows and the text that lists them.
func withButtons(room id.RoomID, rows [][]channel.Button) (*question, string) {
	q := &question{room: room}
	var parts []string
	for _, row := range rows {
		for _, b := range row {
			e := emojiFor(b, len(q.buttons))
			q.buttons = append(q.buttons, b)
			q.emoji = append(q.emoji, e)
			parts = append(parts, fmt.Sprintf("%s %d. %s", e, len(q.buttons), b.Label))
		}
	}
	if len(q.buttons) == 0 {
		return nil, ""
	}
	return q, "\n\n" + strings.Join(parts, "\n") + "\n(react, or reply with the number)"
}

// ask remembers q as the buttons of the message ev and puts its reactions
// under it.
func (a *Adapter) ask(ctx context.Context, cli *mautrix.Client, ev id.EventID, q *question) {
	a.mu.Lock()
	if a.questions == nil || len(a.questions) >= maxQuestions {
		a.questions = map[id.EventID]*question{}
	}
	a.questions[ev] = q
	a.lastQ[q.room] = ev
	a.mu.Unlock()
	for _, e := range q.emoji {
		c := &event.ReactionEventContent{RelatesTo: event.RelatesTo{Type: event.RelAnnotation, EventID: ev, Key: e}}
		if _, err := a.sendEvent(ctx, cli, q.room, event.EventReaction, c); err != nil {
			a.log.Debug("could not put a button's reaction under the question", "err", err)
		}
	}
}

// asked reports whether ev already has q's buttons (a turn card's edit
// keeps them: its reactions are not put again).
func (a *Adapter) asked(ev id.EventID, q *question) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.questions[ev]
	if old == nil || q == nil || len(old.buttons) != len(q.buttons) {
		return false
	}
	for i := range old.buttons {
		if old.buttons[i] != q.buttons[i] {
			return false
		}
	}
	return true
}

// unask forgets the buttons of ev (an edit without buttons).
func (a *Adapter) unask(ev id.EventID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if q, ok := a.questions[ev]; ok {
		delete(a.questions, ev)
		if a.lastQ[q.room] == ev {
			delete(a.lastQ, q.room)
		}
	}
}

// press is the Action of a reaction evt under a question; false for other
// reactions.
func (a *Adapter) press(evt *event.Event) (channel.InboundMessage, bool) {
	if err := parse(evt); err != nil {
		return channel.InboundMessage{}, false
	}
	r := evt.Content.AsReaction()
	if r == nil || r.RelatesTo.Type != event.RelAnnotation {
		return channel.InboundMessage{}, false
	}
	a.mu.Lock()
	q := a.questions[r.RelatesTo.EventID]
	a.mu.Unlock()
	if q == nil {
		return channel.InboundMessage{}, false
	}
	key := strings.TrimSuffix(r.RelatesTo.Key, "\ufe0f")
	for i, e := range q.emoji {
		if strings.TrimSuffix(e, "\ufe0f") == key {
			return a.action(evt, r.RelatesTo.EventID, q.buttons[i]), true
		}
	}
	return channel.InboundMessage{}, false
}

// numbered is the Action of a typed number answering the room's latest
// question (or the question it replies to); false otherwise.
func (a *Adapter) numbered(evt *event.Event, text string, replyTo id.EventID) (channel.InboundMessage, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		return channel.InboundMessage{}, false
	}
	a.mu.Lock()
	ev := replyTo
	if a.questions[ev] == nil {
		ev = a.lastQ[evt.RoomID]
	}
	q := a.questions[ev]
	a.mu.Unlock()
	if q == nil || n < 1 || n > len(q.buttons) {
		return channel.InboundMessage{}, false
	}
	return a.action(evt, ev, q.buttons[n-1]), true
}

func (a *Adapter) action(evt *event.Event, question id.EventID, b channel.Button) channel.InboundMessage {
	return channel.InboundMessage{
		ChatID:    evt.RoomID.String(),
		MessageID: evt.ID.String(),
		Sender:    channel.Sender{ID: evt.Sender.String(), Name: evt.Sender.Localpart(), Username: evt.Sender.String()},
		Text:      b.Label,
		// A press is addressed to the bot.
		WasMentioned: true,
		Action:       &channel.Action{ButtonID: b.ID, MessageID: question.String()},
	}
}
