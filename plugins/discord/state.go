package discord

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// stateFile is the name of the plugin's state in its data dir.
const stateFile = "discord-state.json"

// Bounds of the state.
const (
	// maxBackfillChannels is how many recently active channels are read
	// back after a session could not be resumed.
	maxBackfillChannels = 50
	// backfillAge: channels quiet for longer are not read back.
	backfillAge = 7 * 24 * time.Hour
	// maxLastSeen: beyond this many channels, those quiet for longer than
	// backfillAge are forgotten.
	maxLastSeen = 1000
	// interactionTTL is how long an interaction token can answer (Discord:
	// 15 minutes), minus a margin for the request itself.
	interactionTTL = 14*time.Minute + 30*time.Second
)

// persisted is the content of the state file.
type persisted struct {
	// Gateway session, to RESUME after a restart (Discord keeps a session
	// resumable for a while after its connection dropped).
	SessionID string `json:"session_id,omitempty"`
	ResumeURL string `json:"resume_url,omitempty"`
	// Seq is the sequence number of the last dispatch whose effect is in
	// this file (its message in Pending, or nothing to do).
	Seq int64 `json:"seq,omitempty"`
	// Me is the bot's identity from READY and GUILD_CREATE: a resumed
	// session gets neither again.
	Me *identity `json:"me,omitempty"`
	// Pending are messages not yet stored by the host, oldest first.
	Pending []channel.InboundMessage `json:"pending,omitempty"`
	// Last is the newest message id seen per channel (thread ids included),
	// for backfill when the session is lost.
	Last map[string]lastSeen `json:"last,omitempty"`
	// Interactions are the slash commands awaiting an answer.
	Interactions []*interaction `json:"interactions,omitempty"`
}

type lastSeen struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
}

// interaction is a deferred slash command: its reply goes through the
// interaction's webhook while the token is valid.
type interaction struct {
	ID       string    `json:"id"`
	Token    string    `json:"token"`
	AppID    string    `json:"app_id"`
	ChatID   string    `json:"chat_id"`
	ThreadID string    `json:"thread_id,omitempty"`
	Created  time.Time `json:"created"`
	// Answered: the original (deferred) response was replaced by the
	// first reply; later replies are follow-ups.
	Answered bool `json:"answered,omitempty"`
	// Messages are the ids of messages sent through the webhook (edits of
	// them go through it too).
	Messages []string `json:"messages,omitempty"`
}

// store is the plugin's durable state: one JSON file in the data dir
// (0600), rewritten through a temporary file and a rename on every change,
// so a crash leaves either the old or the new state. Without a data dir it
// lives in memory only. Safe for concurrent use.
type store struct {
	path string

	mu      sync.Mutex
	p       persisted
	dirty   bool          // seq advanced but not written
	changed chan struct{} // closed and replaced when Pending grows
}

// openStore reads the state file of dir ("" for none).
func openStore(dir string) (*store, error) {
	s := &store{changed: make(chan struct{})}
	if dir == "" {
		return s, nil
	}
	s.path = filepath.Join(dir, stateFile)
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read discord state: %w", err)
	default:
		if err := json.Unmarshal(b, &s.p); err != nil {
			// A torn or foreign file: start afresh rather than never.
			s.p = persisted{}
		}
	}
	return s, nil
}

// saveLocked writes the state file.
func (s *store) saveLocked() error {
	s.dirty = false
	if s.path == "" {
		return nil
	}
	b, err := json.Marshal(&s.p)
	if err != nil {
		return fmt.Errorf("encode discord state: %w", err)
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write discord state: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("write discord state: %w", err)
	}
	return nil
}

// session returns the resumable session, if any.
func (s *store) session() (id, url string, seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.SessionID, s.p.ResumeURL, s.p.Seq
}

// setSession records a new session (READY).
func (s *store) setSession(id, url string, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.SessionID, s.p.ResumeURL, s.p.Seq = id, url, seq
	return s.saveLocked()
}

// identity returns the saved identity (nil for none).
func (s *store) identity() *identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Me
}

// setIdentity saves the bot's identity.
func (s *store) setIdentity(me *identity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Me = me
	return s.saveLocked()
}

// clearSession forgets the session: the next connection identifies.
func (s *store) clearSession() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.SessionID, s.p.ResumeURL, s.p.Seq = "", "", 0
	return s.saveLocked()
}

// advance records that dispatch seq was handled: msgs (maybe none) are
// pending for the host and channel's newest message is lastID. With
// messages it is written at once; otherwise at the next write or flush.
func (s *store) advance(seq int64, channelID, lastID string, at time.Time, msgs ...channel.InboundMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq > s.p.Seq {
		s.p.Seq = seq
		s.dirty = true
	}
	if lastID != "" {
		if s.p.Last == nil {
			s.p.Last = map[string]lastSeen{}
		}
		if cur, ok := s.p.Last[channelID]; !ok || snowflakeLess(cur.ID, lastID) {
			s.p.Last[channelID] = lastSeen{ID: lastID, Time: at}
			s.dirty = true
		}
		if len(s.p.Last) > maxLastSeen {
			for id, l := range s.p.Last {
				if at.Sub(l.Time) > backfillAge {
					delete(s.p.Last, id)
				}
			}
		}
	}
	added := false
	for _, m := range msgs {
		if s.pendingLocked(m.MessageID) {
			continue
		}
		s.p.Pending = append(s.p.Pending, m)
		added = true
	}
	if !added {
		return nil
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return s.saveLocked()
}

func (s *store) pendingLocked(id string) bool {
	for _, p := range s.p.Pending {
		if p.MessageID == id {
			return true
		}
	}
	return false
}

// flush writes a state changed only by sequence numbers.
func (s *store) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty {
		return nil
	}
	return s.saveLocked()
}

// pending returns the messages awaiting the host and a channel closed when
// more arrive.
func (s *store) pending() ([]channel.InboundMessage, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]channel.InboundMessage(nil), s.p.Pending...), s.changed
}

// delivered drops the messages the host stored.
func (s *store) delivered(msgs []channel.InboundMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := map[string]bool{}
	for _, m := range msgs {
		done[m.MessageID] = true
	}
	kept := s.p.Pending[:0]
	for _, m := range s.p.Pending {
		if !done[m.MessageID] {
			kept = append(kept, m)
		}
	}
	s.p.Pending = kept
	return s.saveLocked()
}

// backfillFrom returns the channels to read back after a lost session,
// most recently active first, with the newest id seen in each.
func (s *store) backfillFrom(now time.Time) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	type ch struct {
		id string
		l  lastSeen
	}
	var all []ch
	for id, l := range s.p.Last {
		if now.Sub(l.Time) <= backfillAge {
			all = append(all, ch{id, l})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].l.Time.After(all[j].l.Time) })
	if len(all) > maxBackfillChannels {
		all = all[:maxBackfillChannels]
	}
	out := map[string]string{}
	for _, c := range all {
		out[c.id] = c.l.ID
	}
	return out
}

// addInteraction remembers a deferred slash command.
func (s *store) addInteraction(ix *interaction, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.p.Interactions[:0]
	for _, x := range s.p.Interactions {
		if now.Sub(x.Created) < interactionTTL && x.ID != ix.ID {
			kept = append(kept, x)
		}
	}
	s.p.Interactions = append(kept, ix)
	return s.saveLocked()
}

// interactionFor returns the newest interaction that a reply to chat and
// thread answers: one whose token is still valid, asked there after any
// other message (newer messages are answered in the channel).
func (s *store) interactionFor(chatID, threadID string, now time.Time) *interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.p.Interactions) - 1; i >= 0; i-- {
		x := s.p.Interactions[i]
		if x.ChatID == chatID && x.ThreadID == threadID && now.Sub(x.Created) < interactionTTL {
			return x
		}
	}
	return nil
}

// dropInteractions forgets the interactions of chat and thread: a newer
// message there is answered in the channel.
func (s *store) dropInteractions(chatID, threadID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.p.Interactions[:0]
	for _, x := range s.p.Interactions {
		if x.ChatID != chatID || x.ThreadID != threadID {
			kept = append(kept, x)
		}
	}
	s.p.Interactions = kept
}

// interactionOf returns the interaction that sent message id, if any.
func (s *store) interactionOf(id string, now time.Time) *interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.p.Interactions {
		for _, m := range x.Messages {
			if m == id && now.Sub(x.Created) < interactionTTL {
				return x
			}
		}
	}
	return nil
}

// answered records a message sent through ix's webhook.
func (s *store) answered(ix *interaction, msgID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix.Answered = true
	ix.Messages = append(ix.Messages, msgID)
	return s.saveLocked()
}

// snowflakeLess orders Discord ids numerically.
func snowflakeLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
