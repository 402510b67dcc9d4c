package anthropictest

import (
	"encoding/json"
	"net/http"
	"time"
)

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
	// Headers are set on the response (a subscription's usage-limit headers,
	// anthropic-ratelimit-unified-*, or retry-after).
	Headers map[string]string
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
