// The fake's REST API: routing, the message and interaction endpoints, attachments.

package discordtest

import (
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
	"time"
	"unicode/utf8"
)

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
	case is("GET", "channels", "*", "messages", "*"):
		return RouteGetMessage, []string{parts[1], parts[3]}
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
	case RouteGetMessage:
		s.mu.Lock()
		m, ok := s.messages[params[1]]
		var cp Message
		if ok && m.ChannelID == params[0] {
			cp = *m
		}
		s.mu.Unlock()
		if cp.ID == "" {
			apiError(w, 404, 10008, "Unknown Message")
			return
		}
		writeJSON(w, 200, cp)
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

// readOutgoing decodes the body of a new message (decodeOutgoing) and
// its content; on invalid JSON or content over MaxContentLength it answers
// Discord's error and ok is false.
func readOutgoing(w http.ResponseWriter, r *http.Request, body []byte) (o outgoing, files []UploadedFile, content string, ok bool) {
	o, files, err := decodeOutgoing(r, body)
	if err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return o, nil, "", false
	}
	if o.Content != nil {
		content = *o.Content
	}
	if utf8.RuneCountInString(content) > MaxContentLength {
		tooLong(w)
		return o, nil, "", false
	}
	return o, files, content, true
}

// postedLocked stores m, a message the bot posted, records how it was sent,
// unlocks s.mu and answers with m.
func (s *Server) postedLocked(w http.ResponseWriter, m *Message, how Sent) {
	s.storeLocked(m)
	s.addSentLocked(how)
	cp := *m
	s.mu.Unlock()
	writeJSON(w, 200, cp)
}

// tooLong answers Discord's 50035 for content over the limit.
func tooLong(w http.ResponseWriter) {
	formError(w, formErr{"BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxContentLength), []string{"content"}})
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, body []byte, channelID string) {
	o, files, content, ok := readOutgoing(w, r, body)
	if !ok {
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
	s.postedLocked(w, m, Sent{Method: "create", ChannelID: channelID, MessageID: m.ID, Content: content,
		Reference: o.MessageReference, AllowedMentions: o.AllowedMentions, Files: files, Components: sentRows(o.Components)})
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
	after, before := r.URL.Query().Get("after"), r.URL.Query().Get("before")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[channelID]; !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	var picked []Message
	for _, id := range s.history[channelID] {
		if (after == "" || Less(after, id)) && (before == "" || Less(id, before)) {
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
	o, files, content, ok := readOutgoing(w, r, body)
	if !ok {
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
	s.postedLocked(w, m, Sent{Method: "followup", ChannelID: in.ChannelID, MessageID: m.ID, Content: content, AllowedMentions: o.AllowedMentions, Files: files, Interaction: in.ID, Components: sentRows(o.Components)})
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
