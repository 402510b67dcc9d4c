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
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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
	if m.ID == "" {
		m.ID = s.newIDLocked()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now().UTC()
	}
	if c, ok := s.channels[m.ChannelID]; ok && m.GuildID == "" {
		m.GuildID = c.GuildID
	}
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
	if channel.GuildID != "" {
		in.Member = &struct {
			User User `json:"user"`
		}{User: u}
	} else {
		uu := u
		in.User = &uu
	}
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

// apiError writes Discord's error shape.
func apiError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// route names a request: its route, the path parameters.
func route(method, p string) (string, []string) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	n := len(parts)
	is := func(m string, pat ...string) bool {
		if method != m || n != len(pat) {
			return false
		}
		for i, x := range pat {
			if x != "*" && x != parts[i] {
				return false
			}
		}
		return true
	}
	switch {
	case is("GET", "gateway"), is("GET", "gateway", "bot"):
		return RouteGateway, nil
	case is("GET", "channels", "*"):
		return RouteGetChannel, []string{parts[1]}
	case is("POST", "channels", "*", "messages"):
		return RouteCreate, []string{parts[1]}
	case is("GET", "channels", "*", "messages"):
		return RouteHistory, []string{parts[1]}
	case is("PATCH", "channels", "*", "messages", "*"):
		return RouteEdit, []string{parts[1], parts[3]}
	case is("POST", "channels", "*", "typing"):
		return RouteTyping, []string{parts[1]}
	case is("POST", "channels", "*", "messages", "*", "threads"):
		return RouteStartThread, []string{parts[1], parts[3]}
	case is("POST", "interactions", "*", "*", "callback"):
		return RouteCallback, []string{parts[1], parts[2]}
	case is("POST", "webhooks", "*", "*"):
		return RouteFollowup, []string{parts[1], parts[2]}
	case is("PATCH", "webhooks", "*", "*", "messages", "@original"):
		return RouteEditOriginal, []string{parts[1], parts[2]}
	case is("PATCH", "webhooks", "*", "*", "messages", "*"):
		return RouteEditFollowup, []string{parts[1], parts[2], parts[4]}
	case is("PUT", "channels", "*", "messages", "*", "reactions", "*", "@me"):
		return RouteReact, []string{parts[1], parts[3], parts[5]}
	case is("DELETE", "channels", "*", "messages", "*", "reactions", "*", "@me"):
		return RouteUnreact, []string{parts[1], parts[3], parts[5]}
	case is("GET", "users", "@me"):
		return RouteMe, nil
	case is("GET", "applications", "@me"):
		return RouteApplication, nil
	case is("PUT", "applications", "*", "commands"):
		return RouteCommands, []string{""}
	case is("PUT", "applications", "*", "guilds", "*", "commands"):
		return RouteCommands, []string{parts[3]}
	}
	return "", nil
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/gw" || r.URL.Path == "/gw/" {
		s.serveGateway(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/attachments/") {
		s.serveAttachment(w, r)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/api/v9/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	name, params := route(r.Method, p)
	webhook := name == RouteFollowup || name == RouteEditOriginal || name == RouteEditFollowup || name == RouteCallback
	s.mu.Lock()
	s.requests = append(s.requests, Request{Route: name, Method: r.Method, Path: r.URL.Path, Body: body, Time: time.Now()})
	s.mu.Unlock()
	if name == "" {
		apiError(w, http.StatusNotFound, 0, "404: Not Found")
		return
	}
	// Interaction endpoints are authorized by their token, not the bot's.
	if !webhook && r.Header.Get("Authorization") != "Bot "+s.token {
		apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	if f, ok := s.nextFailure(name); ok {
		if f.LoseAnswer {
			s.dispatchREST(httptest.NewRecorder(), r, name, params, body)
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
			return
		}
		if f.Status == http.StatusTooManyRequests {
			secs := f.RetryAfter.Seconds()
			w.Header().Set("Retry-After", strconv.Itoa(int(secs+0.999)))
			writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false})
			return
		}
		apiError(w, f.Status, f.Code, f.Message)
		return
	}
	s.dispatchREST(w, r, name, params, body)
}

// react adds or removes the bot's reaction emoji on a message of the
// channel (204, as Discord answers).
func (s *Server) react(w http.ResponseWriter, channelID, id, emoji string, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok || m.ChannelID != channelID {
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	if s.reactions == nil {
		s.reactions = map[string][]string{}
	}
	list := slices.DeleteFunc(s.reactions[id], func(e string) bool { return e == emoji })
	if add {
		list = append(list, emoji)
	}
	s.reactions[id] = list
	w.WriteHeader(http.StatusNoContent)
}

// Reactions are the bot's reactions on message id, in the order added.
func (s *Server) Reactions(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions[id])
}

// dispatchREST serves one REST route.
func (s *Server) dispatchREST(w http.ResponseWriter, r *http.Request, name string, params []string, body []byte) {
	switch name {
	case RouteGateway:
		u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gw"
		writeJSON(w, 200, map[string]any{"url": u, "shards": 1,
			"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 86400000, "max_concurrency": 1}})
	case RouteMe:
		writeJSON(w, 200, s.bot)
	case RouteApplication:
		s.mu.Lock()
		flags := 0
		if s.contentAllowed {
			flags = FlagGatewayMessageContentLimited
		}
		s.mu.Unlock()
		writeJSON(w, 200, map[string]any{"id": AppID, "name": "clawbot", "flags": flags, "bot": s.bot})
	case RouteGetChannel:
		s.mu.Lock()
		c, ok := s.channels[params[0]]
		s.mu.Unlock()
		if !ok {
			apiError(w, 404, 10003, "Unknown Channel")
			return
		}
		writeJSON(w, 200, c)
	case RouteCreate:
		s.createMessage(w, r, body, params[0])
	case RouteEdit:
		s.editMessage(w, body, params[0], params[1], "edit", "")
	case RouteReact, RouteUnreact:
		s.react(w, params[0], params[1], params[2], name == RouteReact)
	case RouteHistory:
		s.getMessages(w, r, params[0])
	case RouteTyping:
		if !s.hasChannel(params[0]) {
			apiError(w, 404, 10003, "Unknown Channel")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case RouteStartThread:
		s.startThread(w, body, params[0], params[1])
	case RouteCallback:
		s.callback(w, body, params[0], params[1])
	case RouteFollowup:
		s.followup(w, r, body, params[1])
	case RouteEditOriginal, RouteEditFollowup:
		s.webhookEdit(w, body, name, params)
	case RouteCommands:
		s.overwriteCommands(w, body, params[0])
	}
}

func (s *Server) hasChannel(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.channels[id]
	return ok
}

// outgoing is the body of a message create or edit.
type outgoing struct {
	Content          *string           `json:"content"`
	MessageReference *MessageReference `json:"message_reference"`
	AllowedMentions  json.RawMessage   `json:"allowed_mentions"`
	Flags            int               `json:"flags"`
	// Components: absent keeps a message's rows on an edit; null or []
	// clears them.
	Components components `json:"components"`
}

// decodeOutgoing reads a JSON or multipart (payload_json + files[n]) body.
func decodeOutgoing(r *http.Request, body []byte) (outgoing, []UploadedFile, error) {
	var o outgoing
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		err := json.Unmarshal(body, &o)
		return o, nil, err
	}
	mr := multipart.NewReader(strings.NewReader(string(body)), params["boundary"])
	var files []UploadedFile
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return o, nil, err
		}
		data, _ := io.ReadAll(part)
		if part.FormName() == "payload_json" {
			if err := json.Unmarshal(data, &o); err != nil {
				return o, nil, err
			}
			continue
		}
		files = append(files, UploadedFile{Field: part.FormName(), Filename: part.FileName(), MIME: part.Header.Get("Content-Type"), Data: data})
	}
	return o, files, nil
}

// tooLong answers Discord's 50035 for content over the limit.
func tooLong(w http.ResponseWriter) {
	formError(w, formErr{"BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxContentLength), []string{"content"}})
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, body []byte, channelID string) {
	o, files, err := decodeOutgoing(r, body)
	if err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	content := ""
	if o.Content != nil {
		content = *o.Content
	}
	if utf8.RuneCountInString(content) > MaxContentLength {
		tooLong(w)
		return
	}
	if e := o.Components.check(); e != nil {
		formError(w, *e)
		return
	}
	if content == "" && len(files) == 0 && len(o.Components.rows) == 0 {
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	s.mu.Lock()
	c, ok := s.channels[channelID]
	if !ok {
		s.mu.Unlock()
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	m := &Message{ID: s.newIDLocked(), ChannelID: channelID, GuildID: c.GuildID, Author: s.bot, Content: content,
		Timestamp: time.Now().UTC(), MessageReference: o.MessageReference, Components: copyRows(o.Components.rows)}
	for _, f := range files {
		m.Attachments = append(m.Attachments, Attachment{ID: s.newIDLocked(), Filename: f.Filename, ContentType: f.MIME, Size: len(f.Data)})
	}
	s.storeLocked(m)
	s.addSentLocked(Sent{Method: "create", ChannelID: channelID, MessageID: m.ID, Content: content,
		Reference: o.MessageReference, AllowedMentions: o.AllowedMentions, Files: files, Components: sentRows(o.Components)})
	cp := *m
	s.mu.Unlock()
	writeJSON(w, 200, cp)
}

func (s *Server) editMessage(w http.ResponseWriter, body []byte, channelID, id, method, interaction string) {
	var o outgoing
	if err := json.Unmarshal(body, &o); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	if o.Content != nil && utf8.RuneCountInString(*o.Content) > MaxContentLength {
		tooLong(w)
		return
	}
	if e := o.Components.check(); e != nil {
		formError(w, *e)
		return
	}
	s.mu.Lock()
	m, ok := s.messages[id]
	if !ok || (channelID != "" && m.ChannelID != channelID) {
		s.mu.Unlock()
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	if m.Author.ID != s.bot.ID {
		s.mu.Unlock()
		apiError(w, 403, 50005, "Cannot edit a message authored by another user")
		return
	}
	if o.Content != nil {
		m.Content = *o.Content
	}
	if o.Components.present { // absent: kept; null or [] clears
		m.Components = copyRows(o.Components.rows)
	}
	now := time.Now().UTC()
	m.EditedTimestamp = &now
	s.addSentLocked(Sent{Method: method, ChannelID: m.ChannelID, MessageID: id, Content: m.Content, AllowedMentions: o.AllowedMentions, Interaction: interaction, Components: sentRows(o.Components)})
	cp := *m
	s.mu.Unlock()
	writeJSON(w, 200, cp)
}

// getMessages serves channel history: newest first, at most limit (50 by
// default, 100 at most), only ids after "after" when given.
func (s *Server) getMessages(w http.ResponseWriter, r *http.Request, channelID string) {
	limit := 50
	if l, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && l > 0 && l <= 100 {
		limit = l
	}
	after := r.URL.Query().Get("after")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[channelID]; !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	var picked []Message
	for _, id := range s.history[channelID] {
		if after == "" || Less(after, id) {
			picked = append(picked, *s.messages[id])
		}
	}
	if after != "" && len(picked) > limit { // the oldest after "after"
		picked = picked[:limit]
	} else if len(picked) > limit {
		picked = picked[len(picked)-limit:]
	}
	out := make([]Message, 0, len(picked))
	for i := len(picked) - 1; i >= 0; i-- {
		out = append(out, picked[i])
	}
	writeJSON(w, 200, out)
}

// Less orders snowflakes numerically.
func Less(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func (s *Server) startThread(w http.ResponseWriter, body []byte, channelID, messageID string) {
	var req struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	parent, ok := s.channels[channelID]
	if !ok {
		s.mu.Unlock()
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	if req.Name == "" || utf8.RuneCountInString(req.Name) > 100 {
		s.mu.Unlock()
		apiError(w, 400, 50035, "Invalid Form Body")
		return
	}
	// A thread started from a message has the message's id.
	th := Channel{ID: messageID, Type: ChannelPublicThread, GuildID: parent.GuildID, Name: req.Name, ParentID: channelID, OwnerID: s.bot.ID}
	s.channels[th.ID] = th
	s.mu.Unlock()
	writeJSON(w, 201, th)
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request, body []byte, token string) {
	o, files, err := decodeOutgoing(r, body)
	if err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	content := ""
	if o.Content != nil {
		content = *o.Content
	}
	if utf8.RuneCountInString(content) > MaxContentLength {
		tooLong(w)
		return
	}
	s.mu.Lock()
	in, ok := s.interactions[token]
	if !ok {
		s.mu.Unlock()
		apiError(w, 404, 10015, "Unknown Webhook")
		return
	}
	if e := o.Components.check(); e != nil {
		s.mu.Unlock()
		formError(w, *e)
		return
	}
	m := &Message{ID: s.newIDLocked(), ChannelID: in.ChannelID, GuildID: in.GuildID, Author: s.bot, Content: content, Timestamp: time.Now().UTC(), WebhookID: AppID, Components: copyRows(o.Components.rows)}
	s.storeLocked(m)
	s.addSentLocked(Sent{Method: "followup", ChannelID: in.ChannelID, MessageID: m.ID, Content: content, AllowedMentions: o.AllowedMentions, Files: files, Interaction: in.ID, Components: sentRows(o.Components)})
	cp := *m
	s.mu.Unlock()
	writeJSON(w, 200, cp)
}

func (s *Server) webhookEdit(w http.ResponseWriter, body []byte, name string, params []string) {
	token := params[1]
	s.mu.Lock()
	in, ok := s.interactions[token]
	id := ""
	if name == RouteEditOriginal {
		orig, has := s.interactions[token+"/original"]
		ok = ok && has
		id = orig.ID
	} else {
		id = params[2]
	}
	s.mu.Unlock()
	if !ok {
		apiError(w, 404, 10015, "Unknown Webhook")
		return
	}
	method := "original"
	if name == RouteEditFollowup {
		method = "edit"
	}
	s.editMessage(w, body, "", id, method, in.ID)
}

func (s *Server) overwriteCommands(w http.ResponseWriter, body []byte, scope string) {
	var cmds []Command
	if err := json.Unmarshal(body, &cmds); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	for _, c := range cmds {
		if c.Name == "" || len(c.Name) > 32 || strings.ToLower(c.Name) != c.Name || c.Description == "" || utf8.RuneCountInString(c.Description) > 100 {
			apiError(w, 400, 50035, "Invalid Form Body")
			return
		}
	}
	s.mu.Lock()
	for i := range cmds {
		cmds[i].ID = s.newIDLocked()
	}
	s.commands[scope] = cmds
	s.mu.Unlock()
	writeJSON(w, 200, cmds)
}

func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.URL.Path]
	s.requests = append(s.requests, Request{Route: RouteAttachment, Method: r.Method, Path: r.URL.Path, Time: time.Now()})
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.mime)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}
