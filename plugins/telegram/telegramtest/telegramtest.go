// Package telegramtest is a fake Telegram Bot API server for tests: a real
// HTTP server on loopback (httptest) that speaks the parts of the Bot API the
// clawhost telegram plugin uses, with Telegram's answers and error texts.
//
// It serves getMe, getUpdates (long polling with real offset semantics: a
// request with offset N confirms and drops every update with update_id < N;
// without new updates it waits up to timeout seconds; a second concurrent
// poll ends the first with 409), sendMessage (validating parse_mode HTML and
// the 4096 UTF-16 limit of the visible text), editMessageText,
// sendChatAction, getFile and file downloads, sendPhoto/sendDocument
// (multipart), setMyCommands, setWebhook/deleteWebhook. Any method can be
// scripted to fail (429 with retry_after, 409, 401, 5xx) with Fail. A wrong
// token is answered 401. Every request is recorded (see Requests), those
// with a wrong token (Request.Unauthorized) and file downloads
// (DownloadMethod) included.
//
// AddFileWithSize stands for huge files and for downloads of unknown size;
// NewServerWithListener starts the fake on a given listener, e.g. on the
// address of a Bot API that was down until then.
//
// Start it from any package:
//
//	srv := telegramtest.NewServer("123:TEST")
//	defer srv.Close()
//	// plugin config: token = "123:TEST", api_endpoint = srv.APIEndpoint()
//	srv.PushText(telegramtest.PrivateChat(1001), telegramtest.User{ID: 1001, FirstName: "Alice"}, "hi")
//	sent, err := srv.WaitSent(ctx, 1)
//
// The package does not import "testing"; it can back end-to-end tests and
// manual runs alike.
package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits the fake enforces, as Telegram does.
const (
	// MaxTextLength is the longest visible message text, in UTF-16 units.
	MaxTextLength = 4096
	// MaxCaptionLength is the longest visible caption, in UTF-16 units.
	MaxCaptionLength = 1024
	// MaxGetFileBytes is the largest file getFile serves (cloud Bot API).
	MaxGetFileBytes = 20 << 20
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

// BotCommand is one entry of setMyCommands.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// Failure is a scripted error answer.
type Failure struct {
	// Code is the HTTP status and error_code (e.g. 429, 409, 401, 502).
	Code int
	// Description is Telegram's text, e.g. "Too Many Requests: retry after 3".
	Description string
	// RetryAfter becomes parameters.retry_after when > 0.
	RetryAfter int
}

// TooManyRequests is Telegram's 429 answer.
func TooManyRequests(retryAfter int) Failure {
	return Failure{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}
}

// Conflict is Telegram's 409 answer to a second poller.
func Conflict() Failure {
	return Failure{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
}

// Unauthorized is Telegram's answer to a rejected token.
func Unauthorized() Failure { return Failure{Code: 401, Description: "Unauthorized"} }

// UploadedFile is a file received in a multipart request.
type UploadedFile struct {
	Field    string
	Filename string
	Data     []byte
}

// DownloadMethod is the Request.Method of a file download (GET
// /file/bot<token>/<file_path>); Params["file_path"] is the path.
const DownloadMethod = "download"

// Request is one recorded API call.
type Request struct {
	Method string
	Params url.Values
	Files  []UploadedFile
	Time   time.Time
	// Unauthorized is set for a call made with a wrong token; it was
	// answered 401 and its parameters were not parsed.
	Unauthorized bool
}

// Sent is a message the bot sent (or edited) successfully.
type Sent struct {
	// Method is the API method: sendMessage, editMessageText, sendPhoto, sendDocument.
	Method    string
	ChatID    string
	MessageID int
	ThreadID  int
	// ReplyTo is the replied-to message id (reply_parameters or reply_to_message_id).
	ReplyTo int
	// Text is the text or caption as sent (HTML source when ParseMode is HTML).
	Text      string
	ParseMode string
	// Visible is what the user sees: Text with tags removed and entities decoded.
	Visible            string
	DisableLinkPreview bool
	Silent             bool
	File               *UploadedFile
}

type queued struct {
	id  int
	raw json.RawMessage
}

type file struct {
	path string
	data []byte
	// size is the file_size getFile announces; < 0 omits it (and the
	// download is sent without Content-Length).
	size int64
}

// Server is the fake Bot API. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string
	bot   User

	mu           sync.Mutex
	notify       chan struct{} // closed and replaced when updates arrive
	updates      []queued
	nextUpdateID int
	confirmed    int // highest offset seen
	poller       chan struct{}
	nextMsgID    int
	messages     map[string]Sent // "chat/id" → current content
	sent         []Sent
	requests     []Request
	failures     map[string][]failureScript
	files        map[string]file
	commands     []BotCommand
	webhook      string
	sentNotify   chan struct{}
}

type failureScript struct {
	f     Failure
	times int // < 0: forever
}

// NewServer starts a fake Bot API on loopback that accepts token and
// serves getMe as the bot "clawbot" (id 999). Close it when done.
func NewServer(token string) *Server {
	s := newServer(token)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// NewServerWithListener is NewServer serving on ln, e.g. a listener on the
// address of a Bot API that was unreachable until now. The server owns ln.
func NewServerWithListener(token string, ln net.Listener) *Server {
	s := newServer(token)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	return s
}

func newServer(token string) *Server {
	return &Server{
		token:        token,
		bot:          User{ID: 999, IsBot: true, FirstName: "Claw", Username: "clawbot"},
		notify:       make(chan struct{}),
		sentNotify:   make(chan struct{}),
		nextUpdateID: 1,
		nextMsgID:    1,
		messages:     map[string]Sent{},
		failures:     map[string][]failureScript{},
		files:        map[string]file{},
	}
}

// Close shuts the server down.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the base URL, e.g. http://127.0.0.1:34567.
func (s *Server) URL() string { return s.srv.URL }

// APIEndpoint is the api_endpoint format string for the plugin config:
// URL()+"/bot%s/%s".
func (s *Server) APIEndpoint() string { return s.srv.URL + "/bot%s/%s" }

// FileEndpoint is the file download format string: URL()+"/file/bot%s/%s".
func (s *Server) FileEndpoint() string { return s.srv.URL + "/file/bot%s/%s" }

// Token is the token the server accepts.
func (s *Server) Token() string { return s.token }

// Bot is the bot's own user, as getMe returns it.
func (s *Server) Bot() User { return s.bot }

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

// Offset is the highest offset a getUpdates request has confirmed.
func (s *Server) Offset() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Fail makes the next times calls of method (e.g. "sendMessage") answer f;
// times < 0 means until ClearFailures.
func (s *Server) Fail(method string, times int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.ToLower(method)
	s.failures[k] = append(s.failures[k], failureScript{f: f, times: times})
}

// ClearFailures removes all scripted failures.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = map[string][]failureScript{}
}

// AddFile makes fileID known to getFile, stored at filePath with data.
func (s *Server) AddFile(fileID, filePath string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = file{path: filePath, data: data, size: int64(len(data))}
}

// AddFileWithSize is AddFile with the file_size getFile announces set to
// size instead of len(data): larger to stand for a huge file without
// holding it in memory (getFile refuses files over MaxGetFileBytes, as
// Telegram does), smaller to model a size Telegram got wrong, or < 0 to
// omit file_size and stream the download without Content-Length.
func (s *Server) AddFileWithSize(fileID, filePath string, data []byte, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = file{path: filePath, data: data, size: size}
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

// Commands is the last list set with setMyCommands.
func (s *Server) Commands() []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BotCommand(nil), s.commands...)
}

// Sent returns the messages sent and edited so far, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// WaitSent waits until at least n messages were sent (see Sent) or ctx ends.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Sent, error) {
	for {
		s.mu.Lock()
		if len(s.sent) >= n {
			out := append([]Sent(nil), s.sent...)
			s.mu.Unlock()
			return out, nil
		}
		wait := s.sentNotify
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return s.Sent(), fmt.Errorf("wait for %d sent messages: %w", n, ctx.Err())
		case <-wait:
		}
	}
}

// Requests returns the recorded calls of method (case-insensitive), or all
// calls when method is "".
func (s *Server) Requests(method string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if method == "" || strings.EqualFold(r.Method, method) {
			out = append(out, r)
		}
	}
	return out
}

// WaitRequests waits until at least n calls of method were recorded.
func (s *Server) WaitRequests(ctx context.Context, method string, n int) ([]Request, error) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if r := s.Requests(method); len(r) >= n {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return s.Requests(method), fmt.Errorf("wait for %d %s requests: %w", n, method, ctx.Err())
		case <-t.C:
		}
	}
}

type apiError struct {
	code int
	desc string
	ra   int
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: 400, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if rest, ok := strings.CutPrefix(path, "/file/bot"); ok {
		s.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(path, "/bot")
	if !ok {
		writeError(w, &apiError{code: 404, desc: "Not Found"})
		return
	}
	token, method, ok := strings.Cut(rest, "/")
	if !ok || method == "" {
		writeError(w, &apiError{code: 404, desc: "Not Found"})
		return
	}
	if token != s.token {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: method, Time: time.Now(), Unauthorized: true})
		s.mu.Unlock()
		writeError(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	req := Request{Method: method, Time: time.Now()}
	if err := parseParams(r, &req); err != nil {
		writeError(w, badRequest("%v", err))
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	f := s.takeFailure(strings.ToLower(method))
	s.mu.Unlock()
	if f != nil {
		writeError(w, &apiError{code: f.Code, desc: f.Description, ra: f.RetryAfter})
		return
	}
	var result any
	var aerr *apiError
	switch strings.ToLower(method) {
	case "getme":
		result = s.bot
	case "getupdates":
		result, aerr = s.getUpdates(r.Context(), req.Params)
		if result == nil && aerr == nil {
			return // client went away
		}
	case "sendmessage":
		result, aerr = s.sendMessage(req.Params)
	case "editmessagetext":
		result, aerr = s.editMessageText(req.Params)
	case "sendchataction":
		result, aerr = s.sendChatAction(req.Params)
	case "getfile":
		result, aerr = s.getFile(req.Params)
	case "sendphoto":
		result, aerr = s.sendFile("sendPhoto", "photo", req)
	case "senddocument":
		result, aerr = s.sendFile("sendDocument", "document", req)
	case "setmycommands":
		result, aerr = s.setMyCommands(req.Params)
	case "setwebhook":
		s.SetWebhook(req.Params.Get("url"))
		result = true
	case "deletewebhook":
		s.SetWebhook("")
		result = true
	default:
		aerr = &apiError{code: 404, desc: "Not Found"}
	}
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	b, _ := json.Marshal(map[string]any{"ok": true, "result": result})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (s *Server) takeFailure(method string) *Failure {
	list := s.failures[method]
	if len(list) == 0 {
		return nil
	}
	f := list[0].f
	if list[0].times > 0 {
		list[0].times--
		if list[0].times == 0 {
			list = list[1:]
		}
	}
	s.failures[method] = list
	return &f
}

func parseParams(r *http.Request, req *Request) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(64 << 20); err != nil {
			return fmt.Errorf("bad multipart body: %w", err)
		}
		req.Params = url.Values(r.MultipartForm.Value)
		fields := make([]string, 0, len(r.MultipartForm.File))
		for k := range r.MultipartForm.File {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		for _, field := range fields {
			for _, fh := range r.MultipartForm.File[field] {
				data, err := readPart(fh)
				if err != nil {
					return err
				}
				req.Files = append(req.Files, UploadedFile{Field: field, Filename: fh.Filename, Data: data})
			}
		}
		return nil
	}
	if err := r.ParseForm(); err != nil {
		return fmt.Errorf("bad form body: %w", err)
	}
	req.Params = r.Form
	return nil
}

func readPart(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.ra > 0 {
		body["parameters"] = map[string]any{"retry_after": e.ra}
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_, _ = w.Write(b)
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
		for _, u := range s.updates {
			if u.id >= offset && len(out) < limit {
				out = append(out, u.raw)
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
			return nil, &apiError{code: 409, desc: Conflict().Description}
		case <-deadline.C:
			return []json.RawMessage{}, nil
		case <-ctx.Done():
			return nil, nil
		}
		s.mu.Lock()
	}
}

func (s *Server) recordSent(m Sent) {
	s.sent = append(s.sent, m)
	s.messages[m.ChatID+"/"+strconv.Itoa(m.MessageID)] = m
	close(s.sentNotify)
	s.sentNotify = make(chan struct{})
}

func checkChat(p url.Values) (string, *apiError) {
	chat := p.Get("chat_id")
	if chat == "" {
		return "", badRequest("chat_id is empty")
	}
	if _, err := strconv.ParseInt(chat, 10, 64); err != nil && !strings.HasPrefix(chat, "@") {
		return "", badRequest("chat not found")
	}
	return chat, nil
}

// visible parses text with parse_mode and returns what the user would see.
func visible(text, parseMode string) (string, *apiError) {
	switch strings.ToLower(parseMode) {
	case "":
		return text, nil
	case "html":
		v, err := ParseHTML(text)
		if err != nil {
			return "", badRequest("can't parse entities: %v", err)
		}
		return v, nil
	case "markdown", "markdownv2":
		return text, nil // not validated by the fake
	default:
		return "", badRequest("unsupported parse_mode")
	}
}

func replyTo(p url.Values) (int, *apiError) {
	if rp := p.Get("reply_parameters"); rp != "" {
		var v struct {
			MessageID int `json:"message_id"`
		}
		if err := json.Unmarshal([]byte(rp), &v); err != nil || v.MessageID == 0 {
			return 0, badRequest("can't parse reply parameters JSON object")
		}
		return v.MessageID, nil
	}
	if id := p.Get("reply_to_message_id"); id != "" {
		n, err := strconv.Atoi(id)
		if err != nil {
			return 0, badRequest("invalid reply_to_message_id")
		}
		return n, nil
	}
	return 0, nil
}

func linkPreviewDisabled(p url.Values) bool {
	if p.Get("disable_web_page_preview") == "true" {
		return true
	}
	if lp := p.Get("link_preview_options"); lp != "" {
		var v struct {
			IsDisabled bool `json:"is_disabled"`
		}
		_ = json.Unmarshal([]byte(lp), &v)
		return v.IsDisabled
	}
	return false
}

func (s *Server) messageJSON(m Sent) map[string]any {
	chatID, _ := strconv.ParseInt(m.ChatID, 10, 64)
	chatType := "supergroup"
	if chatID > 0 {
		chatType = "private"
	}
	out := map[string]any{
		"message_id": m.MessageID,
		"date":       time.Now().Unix(),
		"chat":       map[string]any{"id": chatID, "type": chatType},
		"from":       s.bot,
	}
	if m.File == nil {
		out["text"] = m.Visible
	} else if m.Visible != "" {
		out["caption"] = m.Visible
	}
	if m.ThreadID != 0 {
		out["message_thread_id"] = m.ThreadID
		out["is_topic_message"] = true
	}
	return out
}

func (s *Server) sendMessage(p url.Values) (any, *apiError) {
	chat, aerr := checkChat(p)
	if aerr != nil {
		return nil, aerr
	}
	text := p.Get("text")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	vis, aerr := visible(text, p.Get("parse_mode"))
	if aerr != nil {
		return nil, aerr
	}
	if strings.TrimSpace(vis) == "" {
		return nil, badRequest("message text is empty")
	}
	if UTF16Len(vis) > MaxTextLength {
		return nil, badRequest("message is too long")
	}
	reply, aerr := replyTo(p)
	if aerr != nil {
		return nil, aerr
	}
	thread, _ := strconv.Atoi(p.Get("message_thread_id"))
	s.mu.Lock()
	defer s.mu.Unlock()
	m := Sent{
		Method: "sendMessage", ChatID: chat, MessageID: s.nextMsgID, ThreadID: thread, ReplyTo: reply,
		Text: text, ParseMode: p.Get("parse_mode"), Visible: vis,
		DisableLinkPreview: linkPreviewDisabled(p), Silent: p.Get("disable_notification") == "true",
	}
	s.nextMsgID++
	s.recordSent(m)
	return s.messageJSON(m), nil
}

func (s *Server) editMessageText(p url.Values) (any, *apiError) {
	chat, aerr := checkChat(p)
	if aerr != nil {
		return nil, aerr
	}
	id, err := strconv.Atoi(p.Get("message_id"))
	if err != nil {
		return nil, badRequest("message identifier is not specified")
	}
	text := p.Get("text")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("text must be non-empty")
	}
	vis, aerr := visible(text, p.Get("parse_mode"))
	if aerr != nil {
		return nil, aerr
	}
	if UTF16Len(vis) > MaxTextLength {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.messages[chat+"/"+strconv.Itoa(id)]
	if !ok {
		return nil, badRequest("message to edit not found")
	}
	if old.Visible == vis && strings.EqualFold(old.ParseMode, p.Get("parse_mode")) && old.Text == text {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m := old
	m.Method, m.Text, m.ParseMode, m.Visible = "editMessageText", text, p.Get("parse_mode"), vis
	s.recordSent(m)
	return s.messageJSON(m), nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(p url.Values) (any, *apiError) {
	if _, aerr := checkChat(p); aerr != nil {
		return nil, aerr
	}
	if !chatActions[p.Get("action")] {
		return nil, badRequest("wrong parameter action in request")
	}
	return true, nil
}

func (s *Server) getFile(p url.Values) (any, *apiError) {
	id := p.Get("file_id")
	s.mu.Lock()
	f, ok := s.files[id]
	s.mu.Unlock()
	if !ok {
		return nil, badRequest("invalid file_id")
	}
	if f.size > MaxGetFileBytes || len(f.data) > MaxGetFileBytes {
		return nil, badRequest("file is too big")
	}
	out := map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_path": f.path}
	if f.size >= 0 {
		out["file_size"] = f.size
	}
	return out, nil
}

func (s *Server) serveFile(w http.ResponseWriter, rest string) {
	token, path, ok := strings.Cut(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: DownloadMethod, Params: url.Values{"file_path": {path}}, Time: time.Now(), Unauthorized: !ok || token != s.token})
	if !ok || token != s.token {
		writeError(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	for _, f := range s.files {
		if f.path == path {
			w.Header().Set("Content-Type", "application/octet-stream")
			if f.size >= 0 {
				w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
				_, _ = w.Write(f.data)
				return
			}
			// Unknown size: chunked, in pieces.
			fl, _ := w.(http.Flusher)
			for b := f.data; len(b) > 0; {
				n := min(len(b), 512)
				_, _ = w.Write(b[:n])
				if fl != nil {
					fl.Flush()
				}
				b = b[n:]
			}
			return
		}
	}
	writeError(w, &apiError{code: 404, desc: "Not Found"})
}

func (s *Server) sendFile(method, field string, req Request) (any, *apiError) {
	p := req.Params
	chat, aerr := checkChat(p)
	if aerr != nil {
		return nil, aerr
	}
	var up *UploadedFile
	for i := range req.Files {
		if req.Files[i].Field == field {
			up = &req.Files[i]
		}
	}
	if up == nil {
		if ref := p.Get(field); ref != "" {
			up = &UploadedFile{Field: field, Filename: ref}
		} else {
			return nil, badRequest("there is no %s in the request", field)
		}
	}
	if up.Data != nil && len(up.Data) == 0 {
		return nil, badRequest("file must be non-empty")
	}
	caption := p.Get("caption")
	vis, aerr := visible(caption, p.Get("parse_mode"))
	if aerr != nil {
		return nil, aerr
	}
	if UTF16Len(vis) > MaxCaptionLength {
		return nil, badRequest("message caption is too long")
	}
	reply, aerr := replyTo(p)
	if aerr != nil {
		return nil, aerr
	}
	thread, _ := strconv.Atoi(p.Get("message_thread_id"))
	s.mu.Lock()
	defer s.mu.Unlock()
	m := Sent{
		Method: method, ChatID: chat, MessageID: s.nextMsgID, ThreadID: thread, ReplyTo: reply,
		Text: caption, ParseMode: p.Get("parse_mode"), Visible: vis, File: up,
		Silent: p.Get("disable_notification") == "true",
	}
	s.nextMsgID++
	s.recordSent(m)
	return s.messageJSON(m), nil
}

func (s *Server) setMyCommands(p url.Values) (any, *apiError) {
	var cmds []BotCommand
	if err := json.Unmarshal([]byte(p.Get("commands")), &cmds); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	if len(cmds) > 100 {
		return nil, badRequest("too many commands specified")
	}
	for _, c := range cmds {
		if !validCommand(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := UTF16Len(strings.TrimSpace(c.Description)); n == 0 || n > 256 {
			return nil, badRequest("command description is empty")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = cmds
	return true, nil
}

func validCommand(c string) bool {
	if c == "" || len(c) > 32 {
		return false
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
