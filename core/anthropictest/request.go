package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

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
