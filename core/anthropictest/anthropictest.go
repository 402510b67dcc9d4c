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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
)

// DefaultModel is the model name reported when a request names none.
const DefaultModel = "claude-opus-5-5"

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

// Pending is a copy of the enqueued replies no request has taken yet, in
// the order they will answer.
func (s *Server) Pending() []Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queue)
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
