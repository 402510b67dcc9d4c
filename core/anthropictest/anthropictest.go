// Package anthropictest is a fake of the Anthropic Messages API on loopback, for tests and
// load harnesses that run the real Claude Code CLI (or any Anthropic client) without the
// internet.
//
// It answers what the CLI calls: POST /v1/messages (streaming SSE exactly as the real API
// frames it — message_start, content_block_start, ping, content_block_delta, content_block_stop,
// message_delta, message_stop — or one JSON message when "stream" is false), HEAD /api/hello,
// and minimal POST /v1/messages/count_tokens and GET /v1/models. The "?beta=true" query the
// CLI adds is accepted and ignored.
//
// Replies are scripted: queued replies are used first (one per /v1/messages request), then
// the Responder func, then the default echo mode, which answers "echo: <last user text>".
// A Reply can split its text into several deltas with pauses, delay the response headers,
// fail with an HTTP status and Anthropic's error JSON, set x-should-retry, or call a tool.
//
// Every request is recorded (headers, parsed body, arrival time, and when its last token was
// written), and tests can wait for the n-th request. The package does not import "testing".
package anthropictest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// DefaultModel is the model name reported when a request names none.
const DefaultModel = "claude-opus-5-5"

// Reply scripts the answer to one POST /v1/messages request. The zero Reply is the echo
// reply.
type Reply struct {
	// Text is the assistant text. Empty (and no Status, no ToolUse) means echo mode:
	// "echo: <last user text>".
	Text string
	// Chunks is the number of text_delta events Text is split into (default 1; capped at
	// the number of runes).
	Chunks int
	// ChunkDelay is the pause before each delta after the first.
	ChunkDelay time.Duration
	// HeaderDelay is the pause before the response headers are written. The wait ends
	// early when the client goes away.
	HeaderDelay time.Duration
	// Status, when not 0 or 200, makes the request fail with that HTTP status and an
	// Anthropic error body {"type":"error","error":{"type":ErrorType,"message":ErrorMessage}}.
	Status int
	// ErrorType is the Anthropic error type (default derived from Status, e.g. 529 →
	// "overloaded_error").
	ErrorType string
	// ErrorMessage is the error message (default derived from Status).
	ErrorMessage string
	// ShouldRetry, when not nil, sets the x-should-retry header to "true" or "false".
	ShouldRetry *bool
	// ToolUse, when not nil, appends a tool_use block after the text and ends the message
	// with stop_reason "tool_use".
	ToolUse *ToolUse
	// InputTokens overrides the reported input_tokens (default: an estimate from the body).
	InputTokens int
	// OutputTokens overrides the reported output_tokens (default: about one per 4 bytes).
	OutputTokens int
}

// ToolUse is a tool call in a scripted reply.
type ToolUse struct {
	// Name is the tool name, e.g. "Bash".
	Name string
	// Input is the tool input object, e.g. {"command":"echo hi"}.
	Input map[string]any
}

// Overloaded returns a 529 overloaded_error reply.
func Overloaded() Reply { return Reply{Status: 529} }

// PromptTooLong returns the 400 invalid_request_error the API sends for a context overflow.
func PromptTooLong() Reply {
	return Reply{Status: 400, ErrorMessage: "prompt is too long: 250000 tokens > 200000 maximum"}
}

// Unauthorized returns a 401 authentication_error reply.
func Unauthorized() Reply { return Reply{Status: 401} }

// Responder decides the reply to a request when the queue is empty. It is called from the
// server's handler goroutine and may block (the client waits).
type Responder func(*Request) Reply

// Server is a running fake. Create it with New and stop it with Close.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	queue     []Reply
	responder Responder
	requests  []*Request
	changed   chan struct{} // closed and replaced whenever a request arrives or finishes
}

// New starts a fake on a loopback port.
func New() *Server {
	s := &Server{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.handleMessages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.handleCountTokens)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("HEAD /api/hello", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /api/hello", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL to put in ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server; in-flight streams are cut.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Enqueue appends replies; each answers one future /v1/messages request, in order.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// SetResponder sets the func used when the queue is empty; nil restores echo mode.
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	s.responder = r
	s.mu.Unlock()
}

// Requests returns the /v1/messages requests received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Count is the number of /v1/messages requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// WaitRequest blocks until the n-th /v1/messages request (1-based) has arrived and returns
// it, or returns ctx's error.
func (s *Server) WaitRequest(ctx context.Context, n int) (*Request, error) {
	return s.wait(ctx, n, false)
}

// WaitDone blocks until the n-th request (1-based) has been answered completely (its last
// byte written or its error sent) and returns it, or returns ctx's error.
func (s *Server) WaitDone(ctx context.Context, n int) (*Request, error) {
	return s.wait(ctx, n, true)
}

func (s *Server) wait(ctx context.Context, n int, done bool) (*Request, error) {
	for {
		s.mu.Lock()
		ch := s.changed
		if len(s.requests) >= n {
			r := s.requests[n-1]
			if !done || !r.finished.IsZero() {
				s.mu.Unlock()
				return r, nil
			}
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for request %d: %w", n, ctx.Err())
		}
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Request is one recorded /v1/messages request.
type Request struct {
	// Seq is the 1-based arrival number.
	Seq int
	// Arrived is when the handler started (after the body was read).
	Arrived time.Time
	// Header is the request header (x-api-key included; tests only).
	Header http.Header
	// Query is the raw query string ("beta=true" from the CLI).
	Query string
	// Model, MaxTokens and Stream are from the body.
	Model     string
	MaxTokens int
	Stream    bool
	// System is the system prompt blocks (a plain string body becomes one block).
	System []Block
	// Messages is the conversation as sent.
	Messages []Message
	// Body is the raw JSON body.
	Body []byte

	mu        sync.Mutex
	lastToken time.Time
	finished  time.Time
	status    int
}

// LastTokenAt is when the last text delta (or the JSON body) was written and flushed; zero
// before that or for error replies.
func (r *Request) LastTokenAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastToken
}

// Status is the HTTP status sent (0 while headers are pending).
func (r *Request) Status() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// SystemText is the system blocks' text joined with "\n".
func (r *Request) SystemText() string {
	parts := make([]string, 0, len(r.System))
	for _, b := range r.System {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// UserTexts returns the text of every user message in order, skipping "<system-reminder>"
// blocks and tool results; each message's remaining text blocks are joined with "\n".
func (r *Request) UserTexts() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		if t := m.UserText(); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// LastUserText is the text the echo mode answers: the last user message's text (as in
// UserTexts), or the content of its last tool_result when it has no text.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		if t := m.UserText(); t != "" {
			return t
		}
		for j := len(m.Content) - 1; j >= 0; j-- {
			if m.Content[j].Type == "tool_result" {
				return m.Content[j].ResultText()
			}
		}
	}
	return ""
}

// Message is one entry of "messages". A string content becomes one text block.
type Message struct {
	Role    string
	Content []Block
}

// UserText is the message's text blocks joined with "\n", without "<system-reminder>" blocks.
func (m Message) UserText() string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == "text" && !strings.HasPrefix(b.Text, "<system-reminder>") {
			parts = append(parts, strings.TrimRight(b.Text, "\n"))
		}
	}
	return strings.Join(parts, "\n")
}

// Block is a content block; only the fields this fake needs are decoded.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// ResultText is a tool_result's content as text (string content, or its text blocks).
func (b Block) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var blocks []Block
	if json.Unmarshal(b.Content, &blocks) == nil {
		var parts []string
		for _, x := range blocks {
			parts = append(parts, x.Text)
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// decodeBlocks accepts a string or an array of blocks.
func decodeBlocks(raw json.RawMessage) []Block {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var blocks []Block
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

type wireRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func parseRequest(body []byte) (*Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("decode body: %w", err)
	}
	r := &Request{Model: w.Model, MaxTokens: w.MaxTokens, Stream: w.Stream, Body: body}
	r.System = decodeBlocks(w.System)
	for _, m := range w.Messages {
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: decodeBlocks(m.Content)})
	}
	return r, nil
}

func (s *Server) handleMessages(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		writeError(w, 400, "invalid_request_error", "read body: "+err.Error(), nil)
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		writeError(w, 400, "invalid_request_error", err.Error(), nil)
		return
	}
	req.Arrived = time.Now()
	req.Header = hr.Header.Clone()
	req.Query = hr.URL.RawQuery

	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	var reply Reply
	var scripted bool
	if len(s.queue) > 0 {
		reply, scripted = s.queue[0], true
		s.queue = s.queue[1:]
	}
	responder := s.responder
	s.notifyLocked()
	s.mu.Unlock()

	if !scripted && responder != nil {
		reply = responder(req)
	}
	s.answer(w, hr, req, reply)

	s.mu.Lock()
	req.mu.Lock()
	req.finished = time.Now()
	req.mu.Unlock()
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *Server) answer(w http.ResponseWriter, hr *http.Request, req *Request, reply Reply) {
	if reply.HeaderDelay > 0 {
		t := time.NewTimer(reply.HeaderDelay)
		select {
		case <-t.C:
		case <-hr.Context().Done():
			t.Stop()
			return
		}
	}
	if reply.ShouldRetry != nil {
		w.Header().Set("x-should-retry", fmt.Sprint(*reply.ShouldRetry))
	}
	reqID := "req_fake_" + randHex(10)
	w.Header().Set("request-id", reqID)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		req.setStatus(reply.Status)
		typ, msg := reply.ErrorType, reply.ErrorMessage
		if typ == "" {
			typ = errorTypeFor(reply.Status)
		}
		if msg == "" {
			msg = errorMessageFor(reply.Status)
		}
		writeError(w, reply.Status, typ, msg, &reqID)
		return
	}

	text := reply.Text
	if text == "" && reply.ToolUse == nil {
		text = "echo: " + req.LastUserText()
	}
	model := req.Model
	if model == "" {
		model = DefaultModel
	}
	in := reply.InputTokens
	if in == 0 {
		in = estimateTokens(req)
	}
	out := reply.OutputTokens
	if out == 0 {
		out = len(text)/4 + 1
	}
	stop := "end_turn"
	if reply.ToolUse != nil {
		stop = "tool_use"
	}
	msgID := "msg_fake_" + randHex(10)
	usage := map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

	var toolID string
	var toolInput []byte
	if reply.ToolUse != nil {
		toolID = "toolu_fake_" + randHex(8)
		toolInput, _ = json.Marshal(reply.ToolUse.Input)
		if reply.ToolUse.Input == nil {
			toolInput = []byte("{}")
		}
	}

	if !req.Stream {
		var content []any
		if text != "" {
			content = append(content, map[string]any{"type": "text", "text": text})
		}
		if reply.ToolUse != nil {
			content = append(content, map[string]any{"type": "tool_use", "id": toolID, "name": reply.ToolUse.Name, "input": json.RawMessage(toolInput)})
		}
		b, _ := json.Marshal(map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		req.setStatus(http.StatusOK)
		_, _ = w.Write(b)
		req.setLastToken()
		return
	}

	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	req.setStatus(http.StatusOK)
	send := func(event string, data any) bool {
		b, _ := json.Marshal(data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	startUsage := map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	idx := 0
	if text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		send("ping", map[string]any{"type": "ping"})
		for i, part := range splitRunes(text, reply.Chunks) {
			if i > 0 && reply.ChunkDelay > 0 {
				t := time.NewTimer(reply.ChunkDelay)
				select {
				case <-t.C:
				case <-hr.Context().Done():
					t.Stop()
					return
				}
			}
			if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}}) {
				return
			}
		}
		req.setLastToken()
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if reply.ToolUse != nil {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": toolID, "name": reply.ToolUse.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(toolInput)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		if text == "" {
			req.setLastToken()
		}
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func (r *Request) setStatus(code int) {
	r.mu.Lock()
	r.status = code
	r.mu.Unlock()
}

func (r *Request) setLastToken() {
	r.mu.Lock()
	r.lastToken = time.Now()
	r.mu.Unlock()
}

func (s *Server) handleCountTokens(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	req, err := parseRequest(body)
	if err != nil {
		writeError(w, 400, "invalid_request_error", err.Error(), nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"input_tokens": estimateTokens(req)})
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	models := []any{}
	for _, id := range []string{"claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"} {
		models = append(models, map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2026-01-01T00:00:00Z"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": models, "has_more": false, "first_id": "claude-opus-5-5", "last_id": "claude-haiku-5-5"})
}

func writeError(w http.ResponseWriter, status int, typ, msg string, reqID *string) {
	body := map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	if reqID != nil {
		body["request_id"] = *reqID
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func errorTypeFor(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func errorMessageFor(status int) string {
	switch status {
	case 400:
		return "invalid request"
	case 401:
		return "invalid x-api-key"
	case 403:
		return "permission denied"
	case 429:
		return "Number of request tokens has exceeded your per-minute rate limit"
	case 529:
		return "Overloaded"
	default:
		return "Internal server error"
	}
}

// estimateTokens is a rough count: message and system text bytes / 4, at least 1.
func estimateTokens(r *Request) int {
	n := len(r.SystemText())
	for _, m := range r.Messages {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Input) + len(b.Content)
		}
	}
	return n/4 + 1
}

// splitRunes splits s into n parts of near-equal rune counts (n < 1 means 1).
func splitRunes(s string, n int) []string {
	r := []rune(s)
	if n < 1 {
		n = 1
	}
	if n > len(r) {
		n = len(r)
	}
	if n <= 1 {
		return []string{s}
	}
	out := make([]string, 0, n)
	size := len(r) / n
	for i := 0; i < n; i++ {
		start, end := i*size, (i+1)*size
		if i == n-1 {
			end = len(r)
		}
		out = append(out, string(r[start:end]))
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
