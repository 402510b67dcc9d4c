// Package slacktest is a fake Slack for tests: a real HTTP server on
// loopback (httptest) that serves the Web API methods the clawhost slack
// plugin calls under /api/, file uploads and downloads, and a Socket Mode
// websocket, with Slack's answers and error shapes.
//
// Web API: auth.test, apps.connections.open (the app-level token only),
// chat.postMessage (a user id as channel posts in the bot's DM with the
// user; text over 40,000 characters is msg_too_long; a channel the bot is
// not in is not_in_channel), chat.update (only the bot's messages;
// blocks=[] clears them), reactions.add/remove, users.info,
// conversations.info, files.getUploadURLExternal, the upload URL,
// files.completeUploadExternal (the file shared in a message) and
// url_private_download of files (the bot token as Bearer). Tokens are
// checked (invalid_auth), a method may be scripted to fail with any
// error string or a 429 with Retry-After (Fail), and scopes may be taken
// away (missing_scope naming the scope). Every call is recorded
// (Requests).
//
// Socket Mode: hello on connect; every event (Post, Press, Slash) is an
// envelope that waits for its acknowledgement ({"envelope_id": …}) and is
// sent again, with retry_attempt counted up, on the next connection while
// it is not acknowledged; Disconnect sends a disconnect envelope
// (refresh_requested, warning, …) and Drop cuts the connection. The
// server sends websocket pings, as Slack does.
//
//	srv := slacktest.NewServer("xoxb-test", "xapp-test")
//	defer srv.Close()
//	// plugin config: bot_token, app_token, api_endpoint = srv.Endpoint()
//	dm := srv.AddDM(slacktest.User{ID: "U1001", Name: "alice"})
//	srv.Post(slacktest.Message{Channel: dm, User: "U1001", Text: "hi"})
//
// The package does not import "testing"; it can back end-to-end tests and
// manual runs alike.
package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"
)

// Well-known ids of the fake.
const (
	BotUserID = "UBOT00001"
	BotID     = "BBOT00001"
	BotName   = "clawbot"
	TeamID    = "T0000001"
	AppID     = "A0000001"
)

// MaxTextLength is Slack's limit of a message's text.
const MaxTextLength = 40000

// User is a workspace member.
type User struct {
	ID   string
	Name string
	// DisplayName is the profile's display name; "" shows Name.
	DisplayName string
}

// Channel is a conversation.
type Channel struct {
	ID   string
	Name string
	// Type is "channel", "group" (private), "im" or "mpim".
	Type string
	// User is the other member of an im.
	User string
	// NotMember: the bot is not in the channel (posting fails with
	// not_in_channel; events are still sent).
	NotMember bool
}

// File is an uploaded or inbound file.
type File struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Title    string `json:"title"`
	Mimetype string `json:"mimetype"`
	Size     int    `json:"size"`
	URL      string `json:"url_private_download"`
	Data     []byte `json:"-"`
	Channel  string `json:"-"`
	ThreadTS string `json:"-"`
}

// Message is a message in a channel.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string // BotUserID for the bot's
	Text     string
	// Blocks is the Block Kit JSON of the message ("" none).
	Blocks string
	Files  []File
	// Edits counts chat.update calls on it.
	Edits int
}

// Buttons are the action ids and labels of the message's buttons.
func (m Message) Buttons() []Button {
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	_ = json.Unmarshal([]byte(m.Blocks), &blocks)
	var out []Button
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{ActionID: e.ActionID, Label: e.Text.Text})
			}
		}
	}
	return out
}

// Button is a button under a message.
type Button struct{ ActionID, Label string }

// Request is one recorded Web API call.
type Request struct {
	Time   time.Time
	Method string // "chat.postMessage", "upload", "file"
	Form   url.Values
	Status int
}

// Failure is a scripted answer of a method.
type Failure struct {
	// Error is Slack's error string ({"ok": false, "error": …}).
	Error string
	// RetryAfter, when set, answers 429 with Retry-After in seconds.
	RetryAfter time.Duration
	// Status answers this HTTP status without a body (a 5xx).
	Status int
}

// envelope is a Socket Mode envelope waiting for its acknowledgement.
type envelope struct {
	ID      string
	Type    string
	Payload any
	Attempt int
	Acked   bool
	sent    bool
}

// Server is the fake Slack.
type Server struct {
	srv      *httptest.Server
	botToken string
	appToken string

	mu       sync.Mutex
	flushMu  sync.Mutex // held by flush from picking envelopes to sending them
	changed  chan struct{}
	seq      int
	users    map[string]User
	channels map[string]*Channel
	msgs     []*Message
	files    map[string]*File
	reacts   map[string][]string // channel/ts → names
	reqs     []Request
	fails    map[string][]Failure
	missing  map[string]string // method → scope it lacks
	removed  map[string]bool   // scopes taken away
	envs     []*envelope
	conn     *wsConn
	hellos   int
	loseAcks bool
	tickets  map[string]bool
	// PingInterval is how often the socket is pinged.
	pingInterval time.Duration
}

// NewServer starts a fake Slack accepting the bot token and the app-level
// token.
func NewServer(botToken, appToken string) *Server {
	s := &Server{
		botToken: botToken, appToken: appToken,
		changed: make(chan struct{}), users: map[string]User{}, channels: map[string]*Channel{},
		files: map[string]*File{}, reacts: map[string][]string{}, fails: map[string][]Failure{},
		missing: map[string]string{}, removed: map[string]bool{}, tickets: map[string]bool{}, pingInterval: 5 * time.Second,
	}
	s.users[BotUserID] = User{ID: BotUserID, Name: BotName}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Close stops the server and its socket.
func (s *Server) Close() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Endpoint is the plugin's api_endpoint.
func (s *Server) Endpoint() string { return s.srv.URL }

// notifyLocked wakes Wait.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond (called without the fake's lock; it reads the
// fake's state) is true or ctx ends. It checks again on every change.
func (s *Server) Wait(ctx context.Context, what string, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slacktest: waiting for %s: %w", what, ctx.Err())
		case <-ch:
		}
	}
}

func (s *Server) nextLocked() int {
	s.seq++
	return s.seq
}

// tsLocked is a new message ts.
func (s *Server) tsLocked() string {
	n := s.nextLocked()
	return fmt.Sprintf("%d.%06d", 1700000000+n, n)
}

// AddUser adds a member.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// AddChannel adds a conversation (an id is made when c.ID is empty).
func (s *Server) AddChannel(c Channel) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Type == "" {
		c.Type = "channel"
	}
	if c.ID == "" {
		prefix := map[string]string{"channel": "C", "group": "G", "im": "D", "mpim": "G"}[c.Type]
		c.ID = fmt.Sprintf("%s%07d", prefix, s.nextLocked())
	}
	cp := c
	s.channels[c.ID] = &cp
	return c
}

// AddDM adds a member and the bot's DM with them.
func (s *Server) AddDM(u User) Channel {
	s.AddUser(u)
	return s.AddChannel(Channel{Type: "im", User: u.ID})
}

// dmOfLocked is the bot's DM with user, made when missing.
func (s *Server) dmOfLocked(user string) *Channel {
	for _, c := range s.channels {
		if c.Type == "im" && c.User == user {
			return c
		}
	}
	c := &Channel{ID: fmt.Sprintf("D%07d", s.nextLocked()), Type: "im", User: user}
	s.channels[c.ID] = c
	return c
}

// AddFile stores a file a person shares; put it in Message.Files.
func (s *Server) AddFile(name, mimeType string, data []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("F%07d", s.nextLocked())
	f := &File{ID: id, Name: name, Title: name, Mimetype: mimeType, Size: len(data), Data: data,
		URL: s.srv.URL + "/files/" + id + "/" + url.PathEscape(name)}
	s.files[id] = f
	return *f
}
