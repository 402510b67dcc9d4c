package turn

import (
	"container/list"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// History keeps, per group chat, the recent messages not addressed to the
// bot, for the next addressed message. Groups are evicted least recently
// used first beyond maxGroups.
type History struct {
	mu        sync.Mutex
	maxGroups int
	lru       *list.List // of *historyEntry, front = most recent
	byKey     map[string]*list.Element
}

type historyEntry struct {
	key   string
	lines []envelope.HistoryEntry
}

// NewHistory returns a History of at most maxGroups chats.
func NewHistory(maxGroups int) *History {
	return &History{maxGroups: maxGroups, lru: list.New(), byKey: map[string]*list.Element{}}
}

// HistoryKey is the group-history key of a message's chat.
func HistoryKey(m *message.Message) string {
	kind := sessionkey.Group
	if m.ChatType != "group" {
		kind = sessionkey.Channel
	}
	return sessionkey.WithThread(sessionkey.HistoryKey(m.Instance, kind, m.ChatID), m.ThreadID)
}

// Add appends an entry to a chat's history, keeping the last limit.
func (h *History) Add(key string, line envelope.HistoryEntry, limit int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	el := h.byKey[key]
	if el == nil {
		el = h.lru.PushFront(&historyEntry{key: key})
		h.byKey[key] = el
		for h.lru.Len() > h.maxGroups {
			old := h.lru.Back()
			h.lru.Remove(old)
			delete(h.byKey, old.Value.(*historyEntry).key)
		}
	} else {
		h.lru.MoveToFront(el)
	}
	e := el.Value.(*historyEntry)
	e.lines = append(e.lines, line)
	if len(e.lines) > limit {
		e.lines = append([]envelope.HistoryEntry(nil), e.lines[len(e.lines)-limit:]...)
	}
}

// Take returns and clears a chat's history.
func (h *History) Take(key string) []envelope.HistoryEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	el := h.byKey[key]
	if el == nil {
		return nil
	}
	h.lru.Remove(el)
	delete(h.byKey, key)
	return el.Value.(*historyEntry).lines
}

// Clear forgets a chat's history.
func (h *History) Clear(key string) { h.Take(key) }

// Remember keeps an unaddressed group message as context for the next
// addressed one (when group history is enabled). admitted says whether its
// sender may trigger the agent in that group (access.Policy.MayTrigger):
// another's message enters the prompt inside an untrusted block.
func (t *Turns) Remember(m *message.Message, admitted bool) {
	set := t.settings()
	if set.GroupHistoryLimit > 0 {
		e := envelope.HistoryEntry{Text: t.envelopeOf(set, m, time.Time{}), Untrusted: !admitted}
		if !admitted {
			e.From = senderName(m)
		}
		t.history.Add(HistoryKey(m), e, set.GroupHistoryLimit)
	}
}
