// Package session is what a chat's session keeps between turns: the typed
// metadata stored as JSON in the session row (store.Session.Chat) — who the
// chat is, the token counts the memory flush needs, the chat's own
// settings (/model, /effort, /mode, /queue), the rules an approval's
// "always" allowed, the earlier claude sessions (/list, /switch) — the
// closed sets among those settings with their parsers, a decode cache, and
// [Cache.Update], the one read-modify-write of that metadata.
//
// The JSON is the one stored since before this package existed
// (testdata/*.json, TestGoldenJSON): a field added here must be optional
// ("omitempty"), so stored rows need no migration.
//
// It is a leaf over the store's contract: it imports core/store for the
// session row and nothing else of the core. The stages that read or write
// session state (core/turn, core/command, core/queue) import it; the
// composer (core/gateway) owns the [Cache] and passes it in.
package session

import (
	"fmt"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Meta is a session's chat metadata, as stored in store.Session.Chat.
type Meta struct {
	Instance     string `json:"instance"`
	Channel      string `json:"channel"`
	ChatType     string `json:"chat_type"`
	ChatID       string `json:"chat_id"`
	ThreadID     string `json:"thread_id,omitempty"`
	Title        string `json:"title,omitempty"`
	SenderName   string `json:"sender_name,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	Window       int    `json:"context_window,omitempty"`
	Compactions  int    `json:"compactions,omitempty"`
	// LastMessage is the time of the last message a turn answered, from
	// which the next message's "+elapsed" counts (LastMessageAt is the end
	// of that turn, which the idle reset needs).
	LastMessage time.Time `json:"last_message,omitzero"`
	// Model and Effort are the session's /model and /effort, "" for the
	// configured default.
	Model  string `json:"model,omitempty"`
	Effort Effort `json:"effort,omitempty"`
	Mode   string `json:"permission_mode,omitempty"`
	// Always are the permission rules the chat allowed for the rest of
	// the session (an approval's "always"), as runner.Rule strings
	// ("Bash(git log:*)"); /new forgets them. A bare name of a scoped
	// tool ("Bash", stored before rules were scoped) allows nothing.
	Always []string  `json:"always_allow,omitempty"`
	Queue  QueueMode `json:"queue_mode,omitempty"`
	// Past are the chat's earlier claude sessions, newest first (/list,
	// /switch), at most MaxPast.
	Past []PastSession `json:"past,omitempty"`
	// Agent is the agent the chat switched to with /agent, kept in the
	// session of the agent the chat is bound to; "" while it talks to
	// that one.
	Agent string `json:"agent,omitempty"`
	// Events are what changed since claude's last turn (a setting, a
	// reset, a stop), oldest first: the next prompt starts with them as
	// "System:" lines. The session update that ends that turn marks them
	// as carried by its journal entry (CarryEvents) and the next turn of
	// another entry drops them, so a crash before the reply is recorded
	// (the entry runs again) neither loses nor repeats one.
	// EventSeq numbers them.
	Events   []Event `json:"events,omitempty"`
	EventSeq int64   `json:"event_seq,omitempty"`
	// PlanFeedback, when set, is a plan claude was asked to keep working
	// on (Keep planning): the next message of the person who sent it back
	// is the feedback on it (plan.go).
	PlanFeedback *PlanFeedback `json:"plan_feedback,omitempty"`
	// Name is the name /name gave the current claude session ("" none);
	// /list shows it and /switch takes it once the session is an earlier
	// one (PastSession.Name).
	Name string `json:"name,omitempty"`
	// ContinuedFrom is the owner's terminal session the current one was
	// continued from with /continue ("" none), Takeover whether it was
	// taken over (the same session id) rather than forked (a copy under an
	// id of the chat's own). docs/continue.md.
	ContinuedFrom string `json:"continued_from,omitempty"`
	Takeover      bool   `json:"takeover,omitempty"`
}

// Event is one change claude is told of in its next prompt.
type Event struct {
	Seq  int64     `json:"seq"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// By is the journal entry whose turn carried the event to claude; 0
	// while no turn has.
	By int64 `json:"by,omitempty"`
}

// MaxEvents bounds the events a session keeps for its next prompt; the
// oldest go first.
const MaxEvents = 20

// AddEvent records text for claude's next prompt.
func (m *Meta) AddEvent(text string, at time.Time) {
	m.EventSeq++
	m.Events = append(m.Events, Event{Seq: m.EventSeq, Text: text, At: at})
	if n := len(m.Events) - MaxEvents; n > 0 {
		m.Events = slices.Delete(m.Events, 0, n)
	}
}

// LastEvent is the sequence number of the newest event m holds (0 none).
func (m Meta) LastEvent() int64 {
	if len(m.Events) == 0 {
		return 0
	}
	return m.Events[len(m.Events)-1].Seq
}

// PendingEvents are the events the prompt of entry's turn carries: those
// no turn carried yet, and those an earlier run of entry itself carried
// (the entry runs again after a crash that came before its reply was
// recorded).
func (m Meta) PendingEvents(entry int64) []Event {
	var out []Event
	for _, e := range m.Events {
		if e.By == 0 || e.By == entry {
			out = append(out, e)
		}
	}
	return out
}

// CarryEvents records that the turn of entry carried the events up to seq
// to claude: they are marked as entry's, and those another entry's turn
// carried are dropped (that turn ended: a turn of a later entry ran).
func (m *Meta) CarryEvents(entry, seq int64) {
	m.Events = slices.DeleteFunc(m.Events, func(e Event) bool { return e.By != 0 && e.By != entry })
	for i := range m.Events {
		if m.Events[i].Seq <= seq {
			m.Events[i].By = entry
		}
	}
	if len(m.Events) == 0 {
		m.Events = nil
	}
}

// PastSession is an earlier claude session of a chat.
type PastSession struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	Last    time.Time `json:"last"`
	Turns   int64     `json:"turns"`
	// Name is the name /name gave it ("" none).
	Name string `json:"name,omitempty"`
	// Title is claude's own title of it, read from its transcript when
	// listed; not stored.
	Title string `json:"-"`
}

// MaxPast bounds the earlier sessions a chat keeps.
const MaxPast = 10

// Overrides are a session's own settings (/model, /effort, /mode, /queue),
// "" for the configured default.
type Overrides struct {
	Model  string
	Effort Effort
	Mode   string
	Queue  QueueMode
}

// Overrides are m's settings.
func (m Meta) Overrides() Overrides {
	return Overrides{Model: m.Model, Effort: m.Effort, Mode: m.Mode, Queue: m.Queue}
}

// SetOverrides stores o as m's settings.
func (m *Meta) SetOverrides(o Overrides) {
	m.Model, m.Effort, m.Mode, m.Queue = o.Model, o.Effort, o.Mode, o.Queue
}

// Setting names one of the [Overrides].
type Setting string

// The settings a chat overrides.
const (
	SettingModel  Setting = "model"
	SettingEffort Setting = "effort"
	SettingMode   Setting = "mode"
	SettingQueue  Setting = "queue"
)

// Set changes one setting to value ("" for the configured default). An
// effort or queue mode is parsed ([ParseEffort], [ParseQueueMode]); model
// and mode are taken as they are (the caller checks them against what the
// configuration offers). An unknown name is an error.
func (o *Overrides) Set(name Setting, value string) error {
	switch name {
	case SettingModel:
		o.Model = value
	case SettingEffort:
		e, err := ParseEffort(value)
		if err != nil {
			return err
		}
		o.Effort = e
	case SettingMode:
		o.Mode = value
	case SettingQueue:
		q, err := ParseQueueMode(value)
		if err != nil {
			return err
		}
		o.Queue = q
	default:
		return fmt.Errorf("unknown session setting %q", string(name))
	}
	return nil
}

// PushPast records old, the session being replaced (when it had a turn),
// as the newest earlier session; at most MaxPast are kept.
//
// m is the metadata old was stored with: its name goes with old, and the
// current session has none (nor a terminal session it continued).
func (m *Meta) PushPast(old store.Session) {
	name := m.Name
	m.Name, m.ContinuedFrom, m.Takeover = "", "", false
	if old.ClaudeSessionID == "" || old.Turns == 0 {
		return
	}
	past := []PastSession{{ID: old.ClaudeSessionID, Started: old.CreatedAt, Last: old.LastMessageAt, Turns: old.Turns, Name: name}}
	for _, p := range m.Past {
		if p.ID != old.ClaudeSessionID && len(past) < MaxPast {
			past = append(past, p)
		}
	}
	m.Past = past
}

// DropPast forgets the earlier session id (it became current again).
func (m *Meta) DropPast(id string) {
	m.Past = slices.DeleteFunc(m.Past, func(p PastSession) bool { return p.ID == id })
}

// Kept is the metadata a new session of the chat starts with: the
// overrides (/model and /effort outlive /new), the agent it switched to,
// the earlier sessions and the events not told yet, nothing of the
// conversation (token counts, compactions, always-allowed rules). ok is
// false when there is nothing to keep.
func (m Meta) Kept() (kept Meta, ok bool) {
	kept.SetOverrides(m.Overrides())
	kept.Past = slices.Clone(m.Past)
	kept.Agent = m.Agent
	kept.Events, kept.EventSeq = slices.Clone(m.Events), m.EventSeq
	return kept, kept.Overrides() != (Overrides{}) || len(kept.Past) > 0 || kept.Agent != "" || len(kept.Events) > 0
}
