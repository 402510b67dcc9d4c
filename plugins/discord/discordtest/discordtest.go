// Package discordtest is a fake Discord for tests: a real HTTP server on
// loopback (httptest) that serves the REST API under /api/v9 and the
// gateway websocket, speaking the parts of both the clawhost discord plugin
// uses, with Discord's answers and error shapes.
//
// Gateway: HELLO (op 10) with a configurable heartbeat interval, IDENTIFY
// (op 2) → READY with a session id, resume_gateway_url, the bot user and
// the application id; a wrong token is closed with 4004 and the privileged
// Message Content intent with 4014 unless allowed; HEARTBEAT (op 1) → ACK
// (op 11); dispatches (op 0) with increasing sequence numbers; RESUME (op
// 6) replays every dispatch after the given sequence, then RESUMED, or
// answers op 9 when the session is gone. The control API sends op 7
// (Reconnect), op 9 (InvalidSession) and any close code (CloseGateway).
// Dispatches made while no connection is up are kept in the session, as
// Discord does, and replayed on RESUME. Without the Message Content intent
// a guild message that does not mention the bot arrives with empty content
// and no attachments, as on Discord.
//
// REST: gateway discovery, channels (GET), messages create (JSON or
// multipart with payload_json and files[n]; over 2000 characters is 400
// code 50035), edit, history (after=, limit=), typing, thread start,
// interaction callback, webhook follow-ups and original-response edits,
// application command bulk overwrite (global and per guild), and attachment
// downloads.
//
// Buttons: messages (created, edited, follow-ups) carry action rows of
// buttons (Message.Components), held to Discord's limits — at most 5 rows
// of 5, custom_id 1–100 characters and unique, label 1–80 — with its 400
// code 50035 error tree otherwise; an edit without "components" keeps
// them, with [] or null clears them. PressButton dispatches the
// INTERACTION_CREATE of a press; its callback must come within 3 s
// (SetInteractionDeadline), only once (400 code 40060 after), and a
// deferred update (type 6) is refused for a slash command. Any route can be scripted to fail (429 with retry_after, 403,
// 5xx, …) with Fail. A wrong token is answered 401. Every call is recorded
// (Requests).
//
//	srv := discordtest.NewServer("TOKEN")
//	defer srv.Close()
//	// plugin config: token = "TOKEN", api_endpoint = srv.Endpoint()
//	dm := srv.AddDM(discordtest.User{ID: "1001", Username: "alice"})
//	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "hi"})
//	sent, err := srv.WaitSent(ctx, 1)
//
// The package does not import "testing"; it can back end-to-end tests and
// manual runs alike.
package discordtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// MaxContentLength is Discord's limit of a message's content, in
// characters (Unicode code points).
const MaxContentLength = 2000

// Well-known ids of the fake.
const (
	// BotID is the bot user's id.
	BotID = "900000000000000001"
	// AppID is the application id (READY's application.id).
	AppID = "900000000000000002"
	// BotRoleID is the bot's managed role in every guild the fake serves.
	BotRoleID = "900000000000000003"
)

// Route names of Request.Route and Fail.
const (
	RouteGateway      = "gateway"
	RouteGetChannel   = "get_channel"
	RouteCreate       = "create_message"
	RouteEdit         = "edit_message"
	RouteReact        = "add_reaction"
	RouteUnreact      = "remove_reaction"
	RouteHistory      = "get_messages"
	RouteGetMessage   = "get_message"
	RouteTyping       = "typing"
	RouteStartThread  = "start_thread"
	RouteCallback     = "interaction_callback"
	RouteFollowup     = "followup"
	RouteEditOriginal = "edit_original"
	RouteEditFollowup = "edit_followup"
	RouteCommands     = "bulk_overwrite_commands"
	RouteAttachment   = "attachment"
	RouteMe           = "get_current_user"
	RouteApplication  = "get_current_application"
)

// Application flags of GET /applications/@me: the Message Content intent
// is on in the Developer Portal (for a bot in 100 servers or more,
// FlagGatewayMessageContent; below, the _LIMITED one, which the fake
// answers when SetMessageContentAllowed is true).
const (
	FlagGatewayMessageContent        = 1 << 18
	FlagGatewayMessageContentLimited = 1 << 19
)

// Server is the fake Discord. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string
	bot   User

	mu             sync.Mutex
	nextID         int64
	channels       map[string]Channel
	messages       map[string]*Message // by id
	reactions      map[string][]string // message id → the bot's reactions
	history        map[string][]string // channel → message ids, oldest first
	files          map[string]file     // attachment path → bytes
	sent           []Sent
	requests       []Request
	failures       map[string][]Failure
	callbacks      []Callback
	callbackNotify chan struct{}
	interactions   map[string]Interaction // by token
	ixCreated      map[string]time.Time   // by interaction id
	ixDeadline     time.Duration
	commands       map[string][]Command // "" (global) or guild id
	sentNotify     chan struct{}
	gw             gateway
	contentAllowed bool
}

type file struct {
	mime string
	data []byte
}

// NewServer starts a fake Discord on loopback for the bot token token
// (without the "Bot " prefix). Close it when done.
func NewServer(token string) *Server {
	s := &Server{
		token:          token,
		bot:            User{ID: BotID, Username: "clawbot", Bot: true},
		nextID:         1_100_000_000_000_000_000,
		channels:       map[string]Channel{},
		messages:       map[string]*Message{},
		history:        map[string][]string{},
		files:          map[string]file{},
		failures:       map[string][]Failure{},
		interactions:   map[string]Interaction{},
		ixCreated:      map[string]time.Time{},
		ixDeadline:     DefaultInteractionDeadline,
		callbackNotify: make(chan struct{}),
		commands:       map[string][]Command{},
		sentNotify:     make(chan struct{}),
		contentAllowed: true,
	}
	s.gw.init()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Close shuts the server down, closing gateway connections first.
func (s *Server) Close() {
	s.gw.closeAll()
	s.srv.Close()
}

// Endpoint is the plugin's api_endpoint for this fake ("http://127.0.0.1:port").
func (s *Server) Endpoint() string { return s.srv.URL }

// Token is the bot token the fake accepts.
func (s *Server) Token() string { return s.token }

// Bot is the bot user.
func (s *Server) Bot() User { return s.bot }

// SetMessageContentAllowed decides whether IDENTIFY with the privileged
// Message Content intent is accepted (default true) or closed with 4014
// ("Disallowed intent(s)"), as when the intent is off in the Developer
// Portal.
func (s *Server) SetMessageContentAllowed(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contentAllowed = ok
}

// newID returns a fresh snowflake.
func (s *Server) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newIDLocked()
}

func (s *Server) newIDLocked() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// AddChannel adds (or replaces) a channel. An empty ID gets a fresh one.
func (s *Server) AddChannel(c Channel) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == "" {
		c.ID = s.newIDLocked()
	}
	s.channels[c.ID] = c
	return c
}

// AddDM adds the DM channel of the bot with u.
func (s *Server) AddDM(u User) Channel {
	return s.AddChannel(Channel{Type: ChannelDM, Name: u.Username})
}

// AddFile stores bytes served as an attachment and returns the attachment
// to put into a pushed message.
func (s *Server) AddFile(name, mimeType string, data []byte) Attachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newIDLocked()
	path := "/attachments/" + id + "/" + name
	s.files[path] = file{mime: mimeType, data: data}
	return Attachment{ID: id, Filename: name, ContentType: mimeType, Size: len(data), URL: s.srv.URL + path}
}

// Push stores m as a message written by m.Author (id and timestamp are
// filled when empty; guild_id from the channel) and dispatches
// MESSAGE_CREATE. It returns the stored message.
func (s *Server) Push(m Message) Message {
	s.mu.Lock()
	s.fillLocked(&m)
	if m.MessageReference != nil && m.ReferencedMessage == nil {
		if r, ok := s.messages[m.MessageReference.MessageID]; ok {
			cp := *r
			m.ReferencedMessage = &cp
		}
	}
	s.storeLocked(&m)
	s.mu.Unlock()
	s.gw.dispatch("MESSAGE_CREATE", m)
	return m
}

// Seed stores a message written before the bot was there: no
// MESSAGE_CREATE is dispatched; the REST API returns it.
func (s *Server) Seed(m Message) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fillLocked(&m)
	s.storeLocked(&m)
	return m
}

// fillLocked fills what the API sets on a message the test left empty: the
// id, the timestamp, and guild_id from its channel.
func (s *Server) fillLocked(m *Message) {
	if m.ID == "" {
		m.ID = s.newIDLocked()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now().UTC()
	}
	if c, ok := s.channels[m.ChannelID]; ok && m.GuildID == "" {
		m.GuildID = c.GuildID
	}
}

// setSender sets who sent the interaction as Discord does: member.user in
// a server (guildID set), user in a DM.
func (in *Interaction) setSender(guildID string, u User) {
	if guildID != "" {
		in.Member = &struct {
			User User `json:"user"`
		}{User: u}
	} else {
		in.User = &u
	}
}

// Edit changes the content of a stored message and dispatches MESSAGE_UPDATE.
func (s *Server) Edit(id, content string) {
	s.mu.Lock()
	m, ok := s.messages[id]
	if !ok {
		s.mu.Unlock()
		return
	}
	now := time.Now().UTC()
	m.Content, m.EditedTimestamp = content, &now
	cp := *m
	s.mu.Unlock()
	s.gw.dispatch("MESSAGE_UPDATE", cp)
}

func (s *Server) storeLocked(m *Message) {
	if m.Mentions == nil {
		m.Mentions = []User{}
	}
	if m.MentionRoles == nil {
		m.MentionRoles = []string{}
	}
	if m.Attachments == nil {
		m.Attachments = []Attachment{}
	}
	if m.Components == nil {
		m.Components = []ActionRow{}
	}
	s.messages[m.ID] = m
	s.history[m.ChannelID] = append(s.history[m.ChannelID], m.ID)
}

// PushCommand dispatches the INTERACTION_CREATE of slash command name
// (with an "args" string option when args is not empty) by u in channel.
func (s *Server) PushCommand(channel Channel, u User, name, args string) Interaction {
	s.mu.Lock()
	in := Interaction{ID: s.newIDLocked(), ApplicationID: AppID, Type: 2, ChannelID: channel.ID, GuildID: channel.GuildID, Version: 1}
	in.Token = "itoken-" + in.ID
	in.Data.ID = s.newIDLocked()
	in.Data.Name = name
	in.Data.Type = 1
	if args != "" {
		in.Data.Options = []CommandOption{{Name: "args", Type: 3, Value: args}}
	}
	in.setSender(channel.GuildID, u)
	s.addInteractionLocked(in)
	s.mu.Unlock()
	s.gw.dispatch("INTERACTION_CREATE", in)
	return in
}

// Message returns the message id as it is now (after edits).
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Sent returns what the bot made appear, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// WaitSent waits until at least n items are in Sent and returns them.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Sent, error) {
	return waitFor(ctx, s, n, "sent messages", func() ([]Sent, chan struct{}) { return s.sent, s.sentNotify })
}

// waitFor waits until the list state returns (read under s.mu) holds at
// least n items and returns a copy; its channel is closed on a change.
func waitFor[T any](ctx context.Context, s *Server, n int, what string, state func() ([]T, chan struct{})) ([]T, error) {
	for {
		s.mu.Lock()
		list, ch := state()
		if len(list) >= n {
			out := append([]T(nil), list...)
			s.mu.Unlock()
			return out, nil
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for %d %s: %w", n, what, ctx.Err())
		case <-ch:
		}
	}
}

// Messages returns the messages of a channel, oldest first, each with its
// latest content.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, id := range s.history[channelID] {
		out = append(out, *s.messages[id])
	}
	return out
}

// Requests returns the recorded REST calls of route ("" for all).
func (s *Server) Requests(route string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if route == "" || r.Route == route {
			out = append(out, r)
		}
	}
	return out
}

// Callbacks returns the recorded interaction callbacks.
func (s *Server) Callbacks() []Callback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Callback(nil), s.callbacks...)
}

// Commands returns the registered application commands of scope: "" for
// the global ones, else a guild id.
func (s *Server) Commands(scope string) []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Command(nil), s.commands[scope]...)
}

// Fail makes the next n calls of route fail with f (n < 0: until
// ClearFailures).
func (s *Server) Fail(route string, n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 {
		s.failures[route] = []Failure{{Status: -1}, f}
		return
	}
	for range n {
		s.failures[route] = append(s.failures[route], f)
	}
}

// ClearFailures drops every scripted failure.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = map[string][]Failure{}
}

// nextFailure pops the scripted failure of route, if any.
func (s *Server) nextFailure(route string) (Failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.failures[route]
	if len(fs) == 0 {
		return Failure{}, false
	}
	if fs[0].Status == -1 { // forever
		return fs[1], true
	}
	s.failures[route] = fs[1:]
	return fs[0], true
}

func (s *Server) addSentLocked(x Sent) {
	x.Time = time.Now()
	s.sent = append(s.sent, x)
	close(s.sentNotify)
	s.sentNotify = make(chan struct{})
}
