package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Scopes of the methods (missing_scope names them).
var scopes = map[string]string{
	"chat.postMessage": "chat:write", "chat.update": "chat:write", "reactions.add": "reactions:write",
	"reactions.remove": "reactions:write", "users.info": "users:read", "conversations.info": "channels:read",
	"conversations.replies":      "channels:history",
	"files.getUploadURLExternal": "files:write", "files.completeUploadExternal": "files:write", "file": "files:read",
}

// AllScopes are the bot scopes the fake grants unless RemoveScope took
// one away (auth.test names them in X-OAuth-Scopes, as Slack does).
var AllScopes = []string{
	"app_mentions:read", "channels:history", "channels:read", "chat:write", "commands", "files:read", "files:write",
	"groups:history", "groups:read", "im:history", "im:read", "im:write", "mpim:history", "mpim:read",
	"reactions:write", "users:read",
}

// Fail makes the next n calls of method (a Web API method, "upload" or
// "file") answer f.
func (s *Server) Fail(method string, n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails[method] = append(s.fails[method], f)
	}
}

// RemoveScope makes every call of the methods needing scope answer
// missing_scope (auth.test still works, as on Slack).
func (s *Server) RemoveScope(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removed[scope] = true
	for m, sc := range scopes {
		if sc == scope {
			s.missing[m] = scope
		}
	}
}

// RevokeBotToken makes the bot token invalid_auth from now on.
func (s *Server) RevokeBotToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.botToken = "revoked:" + s.botToken
}

// Requests are the recorded calls of method ("" all).
func (s *Server) Requests(method string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.reqs {
		if method == "" || r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// Messages are the messages of channel, thread replies included, oldest
// first.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if m.Channel == channelID {
			out = append(out, *m)
		}
	}
	return out
}

// BotMessages are the bot's messages in channel (thread "" all, else
// that thread's).
func (s *Server) BotMessages(channelID, thread string) []Message {
	var out []Message
	for _, m := range s.Messages(channelID) {
		if m.User == BotUserID && (thread == "" || m.ThreadTS == thread) {
			out = append(out, m)
		}
	}
	return out
}

// DM is the bot's DM channel with user ("" when none).
func (s *Server) DM(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.channels {
		if c.Type == "im" && c.User == user {
			return c.ID
		}
	}
	return ""
}

// Reactions are the bot's reactions on a message.
func (s *Server) Reactions(channelID, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reacts[channelID+"/"+ts]...)
}

// Files are the files the bot uploaded and shared.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []File
	for _, f := range s.files {
		if f.Channel != "" {
			out = append(out, *f)
		}
	}
	return out
}

type answer map[string]any

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string) {
	writeJSON(w, answer{"ok": false, "error": code})
}

// token is the request's token: Authorization Bearer, else the form's.
func token(r *http.Request, form url.Values) string {
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return t
	}
	return form.Get("token")
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/socket":
		s.serveSocket(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/upload/"):
		s.serveUpload(w, r, strings.TrimPrefix(r.URL.Path, "/upload/"))
		return
	case strings.HasPrefix(r.URL.Path, "/files/"):
		s.serveFile(w, r)
		return
	case r.URL.Path == ControlPost && r.Method == http.MethodPost:
		s.controlPost(w, r)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	form, err := formOf(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	status := s.record(method, form)
	if status != 0 {
		s.scripted(w, method, status)
		return
	}
	tok := token(r, form)
	s.mu.Lock()
	bot, app, missing := s.botToken, s.appToken, s.missing[method]
	s.mu.Unlock()
	if method == "apps.connections.open" {
		if tok != app {
			fail(w, "invalid_auth")
			return
		}
		s.mu.Lock()
		ticket := strconv.Itoa(s.nextLocked())
		s.tickets[ticket] = true
		s.mu.Unlock()
		u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/socket?ticket=" + ticket
		writeJSON(w, answer{"ok": true, "url": u})
		return
	}
	if tok != bot {
		if tok == app {
			fail(w, "not_allowed_token_type")
			return
		}
		fail(w, "invalid_auth")
		return
	}
	var granted []string
	s.mu.Lock()
	for _, sc := range AllScopes {
		if !s.removed[sc] {
			granted = append(granted, sc)
		}
	}
	s.mu.Unlock()
	w.Header().Set("X-OAuth-Scopes", strings.Join(granted, ","))
	if missing != "" {
		writeJSON(w, answer{"ok": false, "error": "missing_scope", "needed": missing, "provided": "chat:write"})
		return
	}
	s.serveMethod(w, method, form)
}

// serveMethod answers an authorized call of a Web API method.
func (s *Server) serveMethod(w http.ResponseWriter, method string, form url.Values) {
	switch method {
	case "auth.test":
		writeJSON(w, answer{"ok": true, "url": "https://slacktest.slack.com/", "team": "Slacktest", "user": BotName,
			"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID})
	case "users.info":
		s.mu.Lock()
		u, ok := s.users[form.Get("user")]
		s.mu.Unlock()
		if !ok {
			fail(w, "user_not_found")
			return
		}
		writeJSON(w, answer{"ok": true, "user": answer{"id": u.ID, "name": u.Name, "real_name": u.Name,
			"profile": answer{"display_name": u.DisplayName, "real_name": u.Name}}})
	case "conversations.info":
		s.mu.Lock()
		c, ok := s.channels[form.Get("channel")]
		var cp Channel
		if ok {
			cp = *c
		}
		s.mu.Unlock()
		if !ok {
			fail(w, "channel_not_found")
			return
		}
		writeJSON(w, answer{"ok": true, "channel": answer{"id": cp.ID, "name": cp.Name, "is_im": cp.Type == "im",
			"is_private": cp.Type == "group", "is_member": !cp.NotMember, "user": cp.User}})
	case "conversations.replies":
		s.replies(w, form)
	case "chat.postMessage":
		s.postMessage(w, form)
	case "chat.update":
		s.update(w, form)
	case "reactions.add", "reactions.remove":
		s.react(w, form, method == "reactions.add")
	case "files.getUploadURLExternal":
		n, _ := strconv.Atoi(form.Get("length"))
		if form.Get("filename") == "" || n <= 0 {
			fail(w, "invalid_arguments")
			return
		}
		s.mu.Lock()
		id := fmt.Sprintf("F%07d", s.nextLocked())
		s.files[id] = &File{ID: id, Name: form.Get("filename"), Title: form.Get("filename"), Size: n,
			URL: s.srv.URL + "/files/" + id + "/" + url.PathEscape(form.Get("filename"))}
		s.mu.Unlock()
		writeJSON(w, answer{"ok": true, "upload_url": s.srv.URL + "/upload/" + id, "file_id": id})
	case "files.completeUploadExternal":
		s.completeUpload(w, form)
	default:
		fail(w, "unknown_method")
	}
}

// formOf reads the form of a method call (urlencoded body or query, or
// a JSON body).
func formOf(r *http.Request) (url.Values, error) {
	form := url.Values{}
	for k, v := range r.URL.Query() {
		form[k] = v
	}
	if r.Body == nil {
		return form, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var m map[string]any
		if len(body) > 0 && json.Unmarshal(body, &m) == nil {
			for k, v := range m {
				if s, ok := v.(string); ok {
					form.Set(k, s)
				} else {
					b, _ := json.Marshal(v)
					form.Set(k, string(b))
				}
			}
		}
	default:
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		for k, v := range q {
			form[k] = v
		}
	}
	return form, nil
}

// record notes a call and returns the status of a scripted failure (0
// none); the failure itself is taken by scripted.
func (s *Server) record(method string, form url.Values) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Time: time.Now(), Method: method, Form: form, Status: http.StatusOK}
	if f := s.fails[method]; len(f) > 0 {
		switch {
		case f[0].RetryAfter > 0:
			req.Status = http.StatusTooManyRequests
		case f[0].Status != 0:
			req.Status = f[0].Status
		default:
			req.Status = -1 // an error answer
		}
	}
	s.reqs = append(s.reqs, req)
	s.notifyLocked()
	if req.Status == http.StatusOK {
		return 0
	}
	return req.Status
}

// scripted answers the next scripted failure of method.
func (s *Server) scripted(w http.ResponseWriter, method string, _ int) {
	s.mu.Lock()
	f := s.fails[method][0]
	s.fails[method] = s.fails[method][1:]
	s.mu.Unlock()
	switch {
	case f.RetryAfter > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
		w.WriteHeader(http.StatusTooManyRequests)
		writeJSON(w, answer{"ok": false, "error": "ratelimited"})
	case f.Status != 0:
		w.WriteHeader(f.Status)
	default:
		fail(w, f.Error)
	}
}

// channelFor is where a post to id goes: a user id is the bot's DM with
// them.
func (s *Server) channelForLocked(id string) (*Channel, string) {
	if strings.HasPrefix(id, "U") || strings.HasPrefix(id, "W") {
		if _, ok := s.users[id]; !ok {
			return nil, "channel_not_found"
		}
		return s.dmOfLocked(id), ""
	}
	c, ok := s.channels[id]
	if !ok {
		return nil, "channel_not_found"
	}
	if c.NotMember {
		return nil, "not_in_channel"
	}
	return c, ""
}

func (s *Server) postMessage(w http.ResponseWriter, form url.Values) {
	text := form.Get("text")
	if utf8.RuneCountInString(text) > MaxTextLength {
		fail(w, "msg_too_long")
		return
	}
	blocks := form.Get("blocks")
	if text == "" && (blocks == "" || blocks == "[]") {
		fail(w, "no_text")
		return
	}
	if blocks != "" && !json.Valid([]byte(blocks)) {
		fail(w, "invalid_blocks")
		return
	}
	s.mu.Lock()
	c, errCode := s.channelForLocked(form.Get("channel"))
	if errCode != "" {
		s.mu.Unlock()
		fail(w, errCode)
		return
	}
	thread := form.Get("thread_ts")
	if thread != "" && !s.hasMessageLocked(c.ID, thread) {
		s.mu.Unlock()
		fail(w, "thread_not_found")
		return
	}
	m := &Message{Channel: c.ID, TS: s.tsLocked(), ThreadTS: thread, User: BotUserID, Text: text, Blocks: blocks}
	s.msgs = append(s.msgs, m)
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, answer{"ok": true, "channel": c.ID, "ts": m.TS, "message": answer{"text": text, "ts": m.TS, "user": BotUserID}})
}

func (s *Server) hasMessageLocked(channelID, ts string) bool {
	for _, m := range s.msgs {
		if m.Channel == channelID && m.TS == ts {
			return true
		}
	}
	return false
}

func (s *Server) update(w http.ResponseWriter, form url.Values) {
	text := form.Get("text")
	if utf8.RuneCountInString(text) > MaxTextLength {
		fail(w, "msg_too_long")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ts := form.Get("channel"), form.Get("ts")
	if _, ok := s.channels[ch]; !ok {
		fail(w, "channel_not_found")
		return
	}
	for _, m := range s.msgs {
		if m.Channel == ch && m.TS == ts {
			if m.User != BotUserID {
				fail(w, "cant_update_message")
				return
			}
			m.Text = text
			if b, ok := form["blocks"]; ok {
				m.Blocks = b[0]
				if m.Blocks == "[]" {
					m.Blocks = ""
				}
			}
			m.Edits++
			s.notifyLocked()
			writeJSON(w, answer{"ok": true, "channel": ch, "ts": ts, "text": text})
			return
		}
	}
	fail(w, "message_not_found")
}

func (s *Server) react(w http.ResponseWriter, form url.Values, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ts, name := form.Get("channel"), form.Get("timestamp"), form.Get("name")
	if !s.hasMessageLocked(ch, ts) {
		fail(w, "message_not_found")
		return
	}
	k := ch + "/" + ts
	have := s.reacts[k]
	i := -1
	for j, n := range have {
		if n == name {
			i = j
		}
	}
	switch {
	case add && i >= 0:
		fail(w, "already_reacted")
		return
	case add:
		s.reacts[k] = append(have, name)
	case i < 0:
		fail(w, "no_reaction")
		return
	default:
		s.reacts[k] = append(have[:i:i], have[i+1:]...)
	}
	s.notifyLocked()
	writeJSON(w, answer{"ok": true})
}

// ControlPost is the fake's own endpoint (not Slack's) for a process
// outside the test, such as the -inject command of `clawhost plugin
// test`: a form POST of channel, user and text is Post; with forget=1 the
// envelopes not yet acknowledged are dropped first (Forget), as a fresh
// plugin process under test should not get the last one's. It answers
// the message's ts.
const ControlPost = "/_slacktest/post"

func (s *Server) controlPost(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("forget") == "1" {
		s.Forget()
	}
	ts, _ := s.Post(Message{Channel: r.PostForm.Get("channel"), User: r.PostForm.Get("user"), Text: r.PostForm.Get("text")})
	writeJSON(w, answer{"ok": true, "ts": ts})
}
