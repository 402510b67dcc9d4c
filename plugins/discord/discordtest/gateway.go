package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// DefaultHeartbeatInterval is the HELLO heartbeat interval unless
// SetHeartbeatInterval changes it.
const DefaultHeartbeatInterval = 41250 * time.Millisecond

// gateway is the fake's websocket side: one session (one bot), any number
// of connections.
type gateway struct {
	mu         sync.Mutex
	interval   time.Duration
	session    *session
	conns      map[*gwConn]bool
	identifies int
	resumes    int
	heartbeats int
	intents    int
	noAck      bool
	changed    chan struct{}
}

// session is a gateway session: its dispatches are kept for RESUME.
type session struct {
	id      string
	intents int
	seq     int64
	events  []event
}

type event struct {
	seq int64
	t   string
	d   any
}

// gwConn is one websocket. Writes are serialized (one writer per socket).
type gwConn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex
	sess *session // set once identified or resumed
}

func (g *gateway) init() {
	g.interval = DefaultHeartbeatInterval
	g.conns = map[*gwConn]bool{}
	g.changed = make(chan struct{})
}

func (g *gateway) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

func (c *gwConn) send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

func (c *gwConn) closeWith(code int, text string) {
	c.wmu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	c.wmu.Unlock()
	_ = c.ws.Close()
}

type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// SetHeartbeatInterval sets the interval announced in HELLO to new
// connections.
func (s *Server) SetHeartbeatInterval(d time.Duration) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.interval = d
}

// SetHeartbeatAcks decides whether heartbeats are acknowledged (default
// true); false makes the connection a zombie the client must leave.
func (s *Server) SetHeartbeatAcks(on bool) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.noAck = !on
}

// Identifies counts IDENTIFY (op 2) payloads received.
func (s *Server) Identifies() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.identifies
}

// Resumes counts RESUME (op 6) payloads received.
func (s *Server) Resumes() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.resumes
}

// Heartbeats counts HEARTBEAT (op 1) payloads received.
func (s *Server) Heartbeats() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.heartbeats
}

// Intents are the intents of the last IDENTIFY.
func (s *Server) Intents() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.intents
}

// WaitLive waits until a connection is identified or resumed and the
// number of IDENTIFY plus RESUME payloads seen is at least handshakes.
func (s *Server) WaitLive(ctx context.Context, handshakes int) error {
	for {
		s.gw.mu.Lock()
		live := false
		for c := range s.gw.conns {
			live = live || (c.sess != nil && c.sess == s.gw.session)
		}
		ok := live && s.gw.identifies+s.gw.resumes >= handshakes
		ch := s.gw.changed
		s.gw.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a live gateway connection: %w", ctx.Err())
		case <-ch:
		}
	}
}

// Reconnect sends op 7 RECONNECT on every connection.
func (s *Server) Reconnect() {
	s.gw.each(func(c *gwConn) { _ = c.send(map[string]any{"op": 7, "d": nil}) })
}

// InvalidSession sends op 9 INVALID_SESSION with d = resumable; when not
// resumable the session is dropped (its missed dispatches are lost).
func (s *Server) InvalidSession(resumable bool) {
	if !resumable {
		s.DropSession()
	}
	s.gw.each(func(c *gwConn) { _ = c.send(map[string]any{"op": 9, "d": resumable}) })
}

// DropSession forgets the gateway session, as Discord does some time
// after a disconnect: a RESUME is answered op 9, and dispatches until the
// next IDENTIFY are lost (messages stay in the channels' history).
func (s *Server) DropSession() {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.session = nil
	s.gw.notifyLocked()
}

// CloseGateway closes every connection with code (4004, 4014, 1001 …).
// The session stays resumable.
func (s *Server) CloseGateway(code int, text string) {
	s.gw.each(func(c *gwConn) { c.closeWith(code, text) })
}

func (g *gateway) each(f func(*gwConn)) {
	g.mu.Lock()
	conns := make([]*gwConn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		f(c)
	}
}

func (g *gateway) closeAll() {
	g.each(func(c *gwConn) { c.closeWith(websocket.CloseGoingAway, "server closing") })
}

// dispatch appends an event to the session and sends it to its live
// connections; without a session it is lost (returns 0).
func (g *gateway) dispatch(t string, d any) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session == nil {
		return 0
	}
	return g.dispatchLocked(g.session, t, d)
}

func (g *gateway) dispatchLocked(sess *session, t string, d any) int64 {
	sess.seq++
	ev := event{seq: sess.seq, t: t, d: d}
	sess.events = append(sess.events, ev)
	for c := range g.conns {
		if c.sess == sess {
			_ = c.send(frame(ev, sess.intents))
		}
	}
	return ev.seq
}

// frame renders a dispatch for a connection with intents: without Message
// Content a guild message that does not address the bot loses its content.
func frame(ev event, intents int) map[string]any {
	d := ev.d
	if m, ok := d.(Message); ok && intents&IntentMessageContent == 0 && m.GuildID != "" && !addressesBot(m) {
		m.Content, m.Attachments = "", []Attachment{}
		d = m
	}
	return map[string]any{"op": 0, "s": ev.seq, "t": ev.t, "d": d}
}

func addressesBot(m Message) bool {
	if m.Author.ID == BotID {
		return true
	}
	for _, u := range m.Mentions {
		if u.ID == BotID {
			return true
		}
	}
	return m.ReferencedMessage != nil && m.ReferencedMessage.Author.ID == BotID
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	g := &s.gw
	c := &gwConn{ws: ws}
	g.mu.Lock()
	g.conns[c] = true
	interval := g.interval
	g.notifyLocked()
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.conns, c)
		g.notifyLocked()
		g.mu.Unlock()
		_ = ws.Close()
	}()
	if c.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": interval.Milliseconds()}}) != nil {
		return
	}
	for {
		var p payload
		if err := ws.ReadJSON(&p); err != nil {
			return
		}
		switch p.Op {
		case 1:
			g.mu.Lock()
			g.heartbeats++
			ack := !g.noAck
			g.mu.Unlock()
			if ack {
				_ = c.send(map[string]any{"op": 11})
			}
		case 2:
			if !s.identify(c, p.D) {
				return
			}
		case 6:
			s.resume(c, p.D)
		default:
			// other opcodes (presence, voice) are accepted and ignored
		}
	}
}

// identify handles op 2; false means the connection was closed.
func (s *Server) identify(c *gwConn, raw json.RawMessage) bool {
	var d struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	_ = json.Unmarshal(raw, &d)
	g := &s.gw
	g.mu.Lock()
	g.identifies++
	g.intents = d.Intents
	g.notifyLocked()
	already := c.sess != nil
	g.mu.Unlock()
	s.mu.Lock()
	allowed := s.contentAllowed
	s.mu.Unlock()
	switch {
	case already:
		c.closeWith(4005, "Already authenticated.")
		return false
	case strings.TrimPrefix(d.Token, "Bot ") != s.token:
		c.closeWith(4004, "Authentication failed.")
		return false
	case d.Intents&IntentMessageContent != 0 && !allowed:
		c.closeWith(4014, "Disallowed intent(s).")
		return false
	}
	sess := &session{id: s.newID() + "-session", intents: d.Intents}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.session = sess
	c.sess = sess
	wsURL := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gw"
	g.dispatchLocked(sess, "READY", map[string]any{
		"v": 9, "session_id": sess.id, "resume_gateway_url": wsURL, "user": s.bot,
		"guilds": []any{}, "application": map[string]any{"id": AppID, "flags": 0},
	})
	for _, gid := range s.guildIDs() {
		g.dispatchLocked(sess, "GUILD_CREATE", map[string]any{
			"id": gid, "name": "guild " + gid,
			"roles": []any{map[string]any{"id": BotRoleID, "name": "clawbot", "managed": true, "tags": map[string]any{"bot_id": BotID}}},
		})
	}
	g.notifyLocked()
	return true
}

func (s *Server) guildIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, c := range s.channels {
		if c.GuildID != "" && !seen[c.GuildID] {
			seen[c.GuildID] = true
			out = append(out, c.GuildID)
		}
	}
	sort.Strings(out)
	return out
}

// resume handles op 6: replay what the session dispatched after seq, then
// RESUMED; op 9 when the session is unknown.
func (s *Server) resume(c *gwConn, raw json.RawMessage) {
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(raw, &d)
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	g.resumes++
	g.notifyLocked()
	sess := g.session
	if sess == nil || sess.id != d.SessionID || strings.TrimPrefix(d.Token, "Bot ") != s.token {
		_ = c.send(map[string]any{"op": 9, "d": false})
		return
	}
	c.sess = sess
	for _, ev := range sess.events {
		if ev.seq > d.Seq {
			_ = c.send(frame(ev, sess.intents))
		}
	}
	g.dispatchLocked(sess, "RESUMED", map[string]any{})
}
