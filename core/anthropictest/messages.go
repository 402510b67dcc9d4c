package anthropictest

import (
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
