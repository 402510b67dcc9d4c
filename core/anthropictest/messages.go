package anthropictest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

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

// answer writes reply as the response to req: after the header delay, an error reply, one
// JSON message, or an SSE stream, as the reply and the request's "stream" field ask.
func (s *Server) answer(w http.ResponseWriter, hr *http.Request, req *Request, reply Reply) {
	if !pause(hr.Context(), reply.HeaderDelay) {
		return
	}
	if reply.ShouldRetry != nil {
		w.Header().Set("x-should-retry", fmt.Sprint(*reply.ShouldRetry))
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	reqID := "req_fake_" + randHex(10)
	w.Header().Set("request-id", reqID)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeReplyError(w, req, reply, reqID)
		return
	}
	m := resolve(req, reply)
	if !req.Stream {
		writeMessage(w, req, m)
		return
	}
	streamMessage(w, hr, req, m)
}

// pause waits d and reports true, or reports false as soon as ctx ends. A d <= 0 returns
// true at once.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

// writeReplyError sends a scripted error reply, filling in the error type and message the
// reply leaves empty from its status.
func writeReplyError(w http.ResponseWriter, req *Request, reply Reply, reqID string) {
	req.setStatus(reply.Status)
	typ, msg := reply.ErrorType, reply.ErrorMessage
	if typ == "" {
		typ = errorTypeFor(reply.Status)
	}
	if msg == "" {
		msg = errorMessageFor(reply.Status)
	}
	writeError(w, reply.Status, typ, msg, &reqID)
}

// message is a successful reply resolved against its request: echo text filled in,
// defaults applied and ids drawn, ready to be written as JSON or as an SSE stream.
type message struct {
	reply     Reply
	text      string
	model     string
	in, out   int // input and output token counts
	stop      string
	msgID     string
	toolID    string // set when reply.ToolUse is not nil
	toolInput []byte // reply.ToolUse.Input as JSON
}

// resolve applies reply's defaults for req: echo text, the default model, estimated token
// counts, the stop reason, and fresh message and tool ids.
func resolve(req *Request, reply Reply) message {
	m := message{reply: reply, text: reply.Text, model: req.Model, in: reply.InputTokens, out: reply.OutputTokens, stop: "end_turn"}
	if m.text == "" && reply.ToolUse == nil {
		m.text = "echo: " + req.LastUserText()
	}
	if m.model == "" {
		m.model = DefaultModel
	}
	if m.in == 0 {
		m.in = estimateTokens(req)
	}
	if m.out == 0 {
		m.out = len(m.text)/4 + 1
	}
	if reply.ToolUse != nil {
		m.stop = "tool_use"
	}
	m.msgID = "msg_fake_" + randHex(10)
	if reply.ToolUse != nil {
		m.toolID = "toolu_fake_" + randHex(8)
		m.toolInput, _ = json.Marshal(reply.ToolUse.Input)
		if reply.ToolUse.Input == nil {
			m.toolInput = []byte("{}")
		}
	}
	return m
}

// writeMessage answers a request with "stream": false: one JSON message.
func writeMessage(w http.ResponseWriter, req *Request, m message) {
	usage := map[string]any{"input_tokens": m.in, "output_tokens": m.out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	var content []any
	if m.text != "" {
		content = append(content, map[string]any{"type": "text", "text": m.text})
	}
	if tu := m.reply.ToolUse; tu != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": m.toolID, "name": tu.Name, "input": json.RawMessage(m.toolInput)})
	}
	b, _ := json.Marshal(map[string]any{
		"id": m.msgID, "type": "message", "role": "assistant", "model": m.model, "content": content,
		"stop_reason": m.stop, "stop_sequence": nil, "usage": usage,
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	req.setStatus(http.StatusOK)
	_, _ = w.Write(b)
	req.setLastToken()
}

// sse writes server-sent events, flushing after each one.
type sse struct {
	w  http.ResponseWriter
	fl http.Flusher // nil when w cannot flush
}

// send writes one event and reports whether the write succeeded.
func (e sse) send(event string, data any) bool {
	b, _ := json.Marshal(data)
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return false
	}
	if e.fl != nil {
		e.fl.Flush()
	}
	return true
}

// streamMessage answers a streaming request with the SSE sequence the real API sends:
// message_start, the text block, the tool_use block, message_delta, message_stop. It stops
// early when the client goes away during a text delta or a chunk delay.
func streamMessage(w http.ResponseWriter, hr *http.Request, req *Request, m message) {
	fl, _ := w.(http.Flusher)
	e := sse{w: w, fl: fl}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	req.setStatus(http.StatusOK)
	startUsage := map[string]any{"input_tokens": m.in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": m.msgID, "type": "message", "role": "assistant", "model": m.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	idx := 0
	if m.text != "" {
		if !streamText(e, hr, req, m, idx) {
			return
		}
		idx++
	}
	if m.reply.ToolUse != nil {
		streamToolUse(e, req, m, idx)
	}
	e.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": m.stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": m.out}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// streamText writes the text block at index idx as m.reply.Chunks deltas with
// m.reply.ChunkDelay between them. It reports false when the stream must end: the client
// went away during a pause or a delta could not be written.
func streamText(e sse, hr *http.Request, req *Request, m message, idx int) bool {
	e.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
	e.send("ping", map[string]any{"type": "ping"})
	for i, part := range splitRunes(m.text, m.reply.Chunks) {
		if i > 0 && !pause(hr.Context(), m.reply.ChunkDelay) {
			return false
		}
		if !e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}}) {
			return false
		}
	}
	req.setLastToken()
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
	return true
}

// streamToolUse writes the tool_use block at index idx, its input as one input_json_delta.
func streamToolUse(e sse, req *Request, m message, idx int) {
	tu := m.reply.ToolUse
	e.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": m.toolID, "name": tu.Name, "input": map[string]any{}}})
	e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(m.toolInput)}})
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
	if m.text == "" {
		req.setLastToken()
	}
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
