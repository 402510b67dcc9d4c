package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// wsConn is the Socket Mode connection.
type wsConn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex
	done chan struct{}
	once sync.Once
}

func (c *wsConn) send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

func (c *wsConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// Connected is how many connections got their hello so far.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hellos
}

// WaitConnected waits until n connections got their hello.
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	return s.Wait(ctx, fmt.Sprintf("%d socket mode connections", n), func() bool { return s.Connected() >= n })
}

// serveSocket is the Socket Mode websocket: one connection at a time (a
// new one replaces the old), hello, then every envelope not yet
// acknowledged.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.tickets[ticket]
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	// No connection while the hello goes out: an envelope enqueued
	// meanwhile waits for the flush below instead of going out before
	// the hello or being marked unsent again after it went out (it was
	// sent twice: TestReplyInThread saw the mention three times).
	s.mu.Lock()
	old := s.conn
	s.conn = nil
	for _, e := range s.envs {
		if !e.Acked {
			e.sent = false
		}
	}
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	if err := c.send(map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]string{"app_id": AppID},
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 3600}}); err != nil {
		c.close()
		return
	}
	s.mu.Lock()
	s.conn = c
	s.hellos++
	s.notifyLocked()
	s.mu.Unlock()
	s.flush()
	go s.ping(c)
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			c.close()
			s.mu.Lock()
			if s.conn == c {
				s.conn = nil
			}
			s.notifyLocked()
			s.mu.Unlock()
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(b, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		for _, e := range s.envs {
			if e.ID == ack.EnvelopeID && !s.loseAcks {
				e.Acked = true
			}
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
}

func (s *Server) ping(c *wsConn) {
	t := time.NewTicker(s.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			c.wmu.Lock()
			err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
			c.wmu.Unlock()
			if err != nil {
				c.close()
				return
			}
		}
	}
}

// flush sends the envelopes not sent on the current connection, in order.
func (s *Server) flush() {
	s.flushMu.Lock() // two flushes at once would interleave their envelopes
	defer s.flushMu.Unlock()
	s.mu.Lock()
	c := s.conn
	var out []*envelope
	if c != nil {
		for _, e := range s.envs {
			if !e.Acked && !e.sent {
				e.sent = true
				e.Attempt++
				out = append(out, e)
			}
		}
	}
	s.mu.Unlock()
	for _, e := range out {
		reason := ""
		if e.Attempt > 1 {
			reason = "timeout"
		}
		_ = c.send(map[string]any{"envelope_id": e.ID, "type": e.Type, "payload": e.Payload,
			"accepts_response_payload": e.Type != "events_api", "retry_attempt": e.Attempt - 1, "retry_reason": reason})
	}
}

// enqueue adds an envelope and sends it when a connection is up.
func (s *Server) enqueue(typ string, payload any) string {
	s.mu.Lock()
	id := fmt.Sprintf("env-%d", s.nextLocked())
	s.envs = append(s.envs, &envelope{ID: id, Type: typ, Payload: payload})
	s.notifyLocked()
	s.mu.Unlock()
	s.flush()
	return id
}

// Acked reports whether the envelope id was acknowledged.
func (s *Server) Acked(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.envs {
		if e.ID == id {
			return e.Acked
		}
	}
	return false
}

// Attempts is how often envelope id was sent.
func (s *Server) Attempts(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.envs {
		if e.ID == id {
			return e.Attempt
		}
	}
	return 0
}

// Unacked is how many envelopes wait for their acknowledgement.
func (s *Server) Unacked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.envs {
		if !e.Acked {
			n++
		}
	}
	return n
}

// Disconnect sends a disconnect envelope with reason ("refresh_requested",
// "warning", "link_disabled") on the current connection; Slack closes
// the connection shortly after, and so does the fake once the client
// reconnected or after a second.
func (s *Server) Disconnect(reason string) error {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("slacktest: no socket mode connection")
	}
	err := c.send(map[string]any{"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "slacktest"}})
	go func() {
		select {
		case <-c.done:
		case <-time.After(time.Second):
			c.close()
		}
	}()
	return err
}

// Drop cuts the current connection without a word.
func (s *Server) Drop() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// Post is a person's message: stored, and sent as a message event
// (event type "message", channel_type of its channel) in an events_api
// envelope. With mention also an app_mention event is sent, as Slack does
// for an app subscribed to both. It returns the message's ts and the
// envelope ids.
func (s *Server) Post(m Message) (string, []string) {
	return s.post(m, true)
}

// Seed stores a message as written before the app was there: Slack
// sends no event for it, conversations.replies lists it. It returns its ts.
func (s *Server) Seed(m Message) string {
	ts, _ := s.post(m, false)
	return ts
}

func (s *Server) post(m Message, event bool) (string, []string) {
	s.mu.Lock()
	m.TS = s.tsLocked()
	if m.User == "" {
		m.User = "U_UNKNOWN"
	}
	cp := m
	s.msgs = append(s.msgs, &cp)
	ch := s.channels[m.Channel]
	chType := "channel"
	if ch != nil {
		chType = ch.Type
	}
	s.notifyLocked()
	s.mu.Unlock()
	if !event {
		return m.TS, nil
	}
	ev := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "channel": m.Channel,
		"channel_type": chType, "event_ts": m.TS}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	if len(m.Files) > 0 {
		ev["subtype"] = "file_share"
		ev["files"] = m.Files
	}
	ids := []string{s.enqueue("events_api", s.callback(ev))}
	if strings.Contains(m.Text, "<@"+BotUserID+">") && chType != "im" {
		men := map[string]any{"type": "app_mention", "user": m.User, "text": m.Text, "ts": m.TS, "channel": m.Channel, "event_ts": m.TS}
		if m.ThreadTS != "" {
			men["thread_ts"] = m.ThreadTS
		}
		ids = append(ids, s.enqueue("events_api", s.callback(men)))
	}
	return m.TS, ids
}

// Event sends any inner event (a bot's message, an edit, a join).
func (s *Server) Event(ev map[string]any) string {
	return s.enqueue("events_api", s.callback(ev))
}

func (s *Server) callback(ev map[string]any) map[string]any {
	s.mu.Lock()
	n := s.nextLocked()
	s.mu.Unlock()
	return map[string]any{"token": "verification", "team_id": TeamID, "api_app_id": AppID, "type": "event_callback",
		"event_id": fmt.Sprintf("Ev%08d", n), "event_time": time.Now().Unix(), "event": ev}
}

// Press is a person pressing the button actionID under the message ts in
// channel: a block_actions interaction. It returns the envelope id.
func (s *Server) Press(user, channelID, ts, actionID string) (string, error) {
	s.mu.Lock()
	var msg *Message
	for _, m := range s.msgs {
		if m.Channel == channelID && m.TS == ts {
			msg = m
		}
	}
	if msg == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("slacktest: no message %s in %s", ts, channelID)
	}
	label := ""
	for _, b := range msg.Buttons() {
		if b.ActionID == actionID {
			label = b.Label
		}
	}
	if label == "" {
		s.mu.Unlock()
		return "", fmt.Errorf("slacktest: message %s has no button %q", ts, actionID)
	}
	u := s.users[user]
	n := s.nextLocked()
	thread := msg.ThreadTS
	s.mu.Unlock()
	actionTS := fmt.Sprintf("%d.%06d", 1700000000+n, n)
	message := map[string]any{"type": "message", "ts": ts, "user": BotUserID, "text": msg.Text}
	container := map[string]any{"type": "message", "message_ts": ts, "channel_id": channelID, "is_ephemeral": false}
	if thread != "" {
		message["thread_ts"] = thread
		container["thread_ts"] = thread
	}
	payload := map[string]any{
		"type": "block_actions", "trigger_id": fmt.Sprintf("%d.trigger", n), "api_app_id": AppID,
		"team":    map[string]string{"id": TeamID},
		"user":    map[string]string{"id": user, "name": u.Name, "username": u.Name},
		"channel": map[string]string{"id": channelID},
		"message": message, "container": container,
		"actions": []map[string]any{{"type": "button", "action_id": actionID, "block_id": "b", "value": actionID,
			"text": map[string]any{"type": "plain_text", "text": label}, "action_ts": actionTS}},
	}
	return s.enqueue("interactive", payload), nil
}

// Slash is a person typing "/command text" in channel: a slash_commands
// envelope. It returns the envelope id.
func (s *Server) Slash(user, channelID, command, text string) string {
	s.mu.Lock()
	u := s.users[user]
	n := s.nextLocked()
	s.mu.Unlock()
	return s.enqueue("slash_commands", map[string]any{
		"token": "verification", "team_id": TeamID, "channel_id": channelID, "user_id": user, "user_name": u.Name,
		"command": command, "text": text, "trigger_id": fmt.Sprintf("%d.trigger", n), "api_app_id": AppID,
		"response_url": s.srv.URL + "/response",
	})
}

// Forget drops the envelopes not acknowledged yet, as Slack does after
// its last retry.
func (s *Server) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.envs = nil
	s.notifyLocked()
}

// LoseAcks makes the fake drop the acknowledgements it receives (lose),
// as if they never arrived: every envelope stays unacknowledged and is
// sent again on the next connection. LoseAcks(false) ends it.
func (s *Server) LoseAcks(lose bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseAcks = lose
}
