package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// User is a Telegram user as the Bot API encodes it.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is a Telegram chat as the Bot API encodes it.
type Chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Title    string `json:"title,omitempty"`
	Username string `json:"username,omitempty"`
	IsForum  bool   `json:"is_forum,omitempty"`
}

// PrivateChat is the private chat with user id.
func PrivateChat(id int64) Chat { return Chat{ID: id, Type: "private"} }

// Supergroup is a supergroup chat (ids are negative, -100…).
func Supergroup(id int64, title string) Chat { return Chat{ID: id, Type: "supergroup", Title: title} }

type queued struct {
	id  int
	raw json.RawMessage
}

// PushUpdate queues an update for getUpdates. update is any JSON-encodable
// value (a map, a struct, json.RawMessage) describing one update without
// update_id; the server assigns and returns the update_id.
func (s *Server) PushUpdate(update any) int {
	b, err := json.Marshal(update)
	if err != nil {
		panic(fmt.Sprintf("telegramtest: PushUpdate: %v", err))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("telegramtest: PushUpdate needs a JSON object: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpdateID
	s.nextUpdateID++
	m["update_id"] = json.RawMessage(strconv.Itoa(id))
	raw, _ := json.Marshal(m)
	s.updates = append(s.updates, queued{id: id, raw: raw})
	close(s.notify)
	s.notify = make(chan struct{})
	return id
}

// PushText queues a text message from from in chat and returns its
// update_id. The message id is the update id + 1000. Like Telegram, the
// fake marks "@username" mentions and a leading "/command[@bot]" as
// entities.
func (s *Server) PushText(chat Chat, from User, text string) int {
	s.mu.Lock()
	msgID := s.nextUpdateID + 1000
	s.mu.Unlock()
	m := map[string]any{
		"message_id": msgID, "date": time.Now().Unix(), "chat": chat, "from": from, "text": text,
	}
	if e := Entities(text); len(e) > 0 {
		m["entities"] = e
	}
	return s.PushUpdate(map[string]any{"message": m})
}

// Entity is a message entity; offsets and lengths are in UTF-16 units.
type Entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
	User   *User  `json:"user,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Entities finds the "mention" entities (@username) and a leading
// "bot_command" (/cmd or /cmd@bot) of text, as Telegram's server does.
func Entities(text string) []Entity {
	var out []Entity
	units := 0
	runes := []rune(text)
	isWord := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	for i := 0; i < len(runes); {
		r := runes[i]
		start := units
		if (r == '@' || (r == '/' && i == 0)) && (i == 0 || !isWord(runes[i-1])) {
			j := i + 1
			for j < len(runes) && (isWord(runes[j]) || (r == '/' && runes[j] == '@' && j > i+1)) {
				j++
			}
			if j-i > 1 {
				typ := "mention"
				if r == '/' {
					typ = "bot_command"
				}
				out = append(out, Entity{Type: typ, Offset: start, Length: UTF16Len(string(runes[i:j]))})
				units += UTF16Len(string(runes[i:j]))
				i = j
				continue
			}
		}
		units += UTF16Len(string(r))
		i++
	}
	return out
}

// Pending is the number of updates not yet confirmed by an offset.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// DropPending confirms every queued update, as if a previous bot process
// had consumed them: a clean start for the next test.
func (s *Server) DropPending() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = nil
	if s.nextUpdateID > s.confirmed {
		s.confirmed = s.nextUpdateID
	}
}

// HandedOut is when getUpdates first handed out the update id (zero when
// it has not yet): where an inbound latency measurement starts.
func (s *Server) HandedOut(id int) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handedOut[id]
}

// Offset is the highest offset a getUpdates request has confirmed.
func (s *Server) Offset() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// SetWebhook sets (non-empty) or clears the webhook URL, as setWebhook and
// deleteWebhook do; getUpdates answers 409 while one is set.
func (s *Server) SetWebhook(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = u
}

// Webhook is the current webhook URL.
func (s *Server) Webhook() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook
}

// Conflicts counts the long polls ended by another poller's (409), as
// Telegram ends them when two processes poll one token.
func (s *Server) Conflicts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conflicts
}

func (s *Server) getUpdates(ctx context.Context, p url.Values) (any, *apiError) {
	offset, _ := strconv.Atoi(p.Get("offset"))
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := strconv.Atoi(p.Get("timeout"))
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()

	s.mu.Lock()
	if s.webhook != "" {
		s.mu.Unlock()
		return nil, &apiError{code: 409, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	if s.poller != nil {
		close(s.poller)
	}
	mine := make(chan struct{})
	s.poller = mine
	defer func() {
		s.mu.Lock()
		if s.poller == mine {
			s.poller = nil
		}
		s.mu.Unlock()
	}()
	if offset > 0 {
		if offset > s.confirmed {
			s.confirmed = offset
		}
		kept := s.updates[:0]
		for _, u := range s.updates {
			if u.id >= offset {
				kept = append(kept, u)
			}
		}
		s.updates = kept
	}
	for {
		out := []json.RawMessage{}
		now := time.Now()
		for _, u := range s.updates {
			if u.id >= offset && len(out) < limit {
				out = append(out, u.raw)
				if _, ok := s.handedOut[u.id]; !ok {
					s.handedOut[u.id] = now
				}
			}
		}
		if len(out) > 0 || timeout <= 0 {
			s.mu.Unlock()
			return out, nil
		}
		wait := s.notify
		s.mu.Unlock()
		select {
		case <-wait:
		case <-mine:
			s.mu.Lock()
			s.conflicts++
			s.mu.Unlock()
			return nil, &apiError{code: 409, desc: Conflict().Description}
		case <-deadline.C:
			return []json.RawMessage{}, nil
		case <-ctx.Done():
			return nil, nil
		}
		s.mu.Lock()
	}
}
