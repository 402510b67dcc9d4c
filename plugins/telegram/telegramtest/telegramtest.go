// Package telegramtest is a fake Telegram Bot API server for tests: a real
// HTTP server on loopback (httptest) that speaks the parts of the Bot API the
// clawhost telegram plugin uses, with Telegram's answers and error texts.
//
// It serves getMe, getUpdates (long polling with real offset semantics: a
// request with offset N confirms and drops every update with update_id < N;
// without new updates it waits up to timeout seconds; a second concurrent
// poll ends the first with 409), sendMessage (validating parse_mode HTML and
// the 4096 UTF-16 limit of the visible text), editMessageText, deleteMessage,
// sendChatAction, getFile and file downloads, sendPhoto/sendDocument/sendVoice
// (multipart), setMyCommands, setWebhook/deleteWebhook and
// answerCallbackQuery, its parameters as a form, a multipart body or a
// JSON object. Inline keyboards (reply_markup) of sends and edits
// are checked as Telegram does (callback_data of 1-64 bytes) and kept as
// Sent.Keyboard; an edit without reply_markup removes the keyboard.
// PressButton taps a button of a sent message: it queues the callback_query
// update a user's tap makes, and answerCallbackQuery accepts one answer to
// it. Updates are served by getUpdates only: the fake records a webhook URL
// but never posts to it, and it does not filter by allowed_updates (the
// recorded getUpdates requests show what the bot asked for). Any method can be
// scripted to fail (429 with retry_after, 409, 401, 5xx), to lose the
// answer of a call it carried out (dropped connection, malformed 200,
// silence) or to answer after a long silence, with Fail. A wrong
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
//	alice := telegramtest.User{ID: 1001, FirstName: "Alice"}
//	srv.PushText(telegramtest.PrivateChat(1001), alice, "hi")
//	sent, err := srv.WaitSent(ctx, 1)
//	// a reply with buttons (sent[0].Keyboard[0][0].Data == "allow"): tap it
//	id, err := srv.PressButton(telegramtest.PrivateChat(1001), sent[0].MessageID, "allow", alice)
//	_, err = srv.WaitRequests(ctx, "answerCallbackQuery", 1) // or srv.Answered(id)
//
// The package does not import "testing"; it can back end-to-end tests and
// manual runs alike.
package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
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

// Server is the fake Bot API. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string
	bot   User

	mu           sync.Mutex
	notify       chan struct{} // closed and replaced when updates arrive
	updates      []queued
	handedOut    map[int]time.Time // update id → first getUpdates answer holding it
	nextUpdateID int
	confirmed    int // highest offset seen
	poller       chan struct{}
	conflicts    int
	nextMsgID    int
	messages     map[string]Sent // "chat/id" → current content
	sent         []Sent
	requests     []Request
	failures     map[string][]failureScript
	files        map[string]file
	commands     []BotCommand
	scoped       map[string][]BotCommand // scope ("chat:<id>") → its menu
	webhook      string
	sentNotify   chan struct{}
	nextCallback int
	callbacks    map[string]bool   // callback query id → answered
	reactions    map[string]string // "chat/message id" → the bot's reaction ("" none)
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
		handedOut:    map[int]time.Time{},
		failures:     map[string][]failureScript{},
		files:        map[string]file{},
		callbacks:    map[string]bool{},
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
	if f != nil && f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // the client gave up: nothing was carried out
		}
	}
	if f != nil && f.Fault == "" && f.Code != 0 {
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
	case "deletemessage":
		result, aerr = s.deleteMessage(req.Params)
	case "sendchataction":
		result, aerr = s.sendChatAction(req.Params)
	case "setmessagereaction":
		result, aerr = s.setMessageReaction(req.Params)
	case "getfile":
		result, aerr = s.getFile(req.Params)
	case "sendphoto":
		result, aerr = s.sendFile("sendPhoto", "photo", req)
	case "senddocument":
		result, aerr = s.sendFile("sendDocument", "document", req)
	case "sendvoice":
		result, aerr = s.sendFile("sendVoice", "voice", req)
	case "answercallbackquery":
		result, aerr = s.answerCallbackQuery(req.Params)
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
	if f != nil && f.Fault != "" {
		loseAnswer(w, r, f.Fault)
		return
	}
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	b, _ := json.Marshal(map[string]any{"ok": true, "result": result})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func parseParams(r *http.Request, req *Request) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(64 << 20); errors.Is(err, io.EOF) {
			// A body with no parts, as some clients send for a call
			// without parameters (getMe); the Bot API accepts it.
			req.Params = url.Values{}
			return nil
		} else if err != nil {
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
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return parseJSONParams(r, req)
	}
	if err := r.ParseForm(); err != nil {
		return fmt.Errorf("bad form body: %w", err)
	}
	req.Params = r.Form
	return nil
}

// parseJSONParams reads a JSON object body, as the Bot API accepts one:
// a string is the parameter's value, anything else (a number, a bool, an
// object such as reply_markup) its JSON text, as a form would carry it;
// null is no parameter.
func parseJSONParams(r *http.Request, req *Request) error {
	var obj map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&obj); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("bad JSON body: %w", err)
	}
	req.Params = url.Values{}
	for k, raw := range obj {
		var s string
		switch {
		case string(raw) == "null":
		case json.Unmarshal(raw, &s) == nil:
			req.Params.Set(k, s)
		default:
			req.Params.Set(k, string(raw))
		}
	}
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

// loseAnswer loses the answer to a call that was carried out, as f says.
func loseAnswer(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f {
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":tru`))
	case FaultSilence:
		// The call was accepted: its body read to the end, so that the
		// server watches the connection and the client's leaving ends the
		// wait. A multipart body parsed up to its closing boundary is not
		// at EOF: without this the wait, and Close after it, never ended
		// once the client was gone (make test hung in TestVoiceKill9BeforeSend).
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	default: // FaultDrop
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
}
