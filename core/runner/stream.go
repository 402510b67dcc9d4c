package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// EventKind says what an Event carries.
type EventKind int

const (
	// EventText is one complete assistant text block (from an "assistant" message). Each
	// block is sent once. With Config.PartialMessages the same text was already sent as
	// EventTextDelta events; consumers use one or the other.
	EventText EventKind = iota + 1
	// EventTextDelta is a piece of assistant text as it streams (Config.PartialMessages).
	EventTextDelta
	// EventBlockEnd ends a text block whose deltas were sent (Config.PartialMessages).
	EventBlockEnd
	// EventToolUse is a tool call the agent made (progress for the user: "running Bash ...").
	EventToolUse
	// EventResult is the last event of a turn; Event.Result is set.
	EventResult
	// EventPermission is claude asking whether it may use a tool
	// (TurnRequest.AskPermission); Event.Permission is set. The consumer
	// answers it (Permission.Answer) or the turn waits — for an answer, a
	// withdrawal, an abort or the end of the context; the turn's timeout
	// does not count the wait.
	EventPermission
	// EventBegan says the turn truly began: claude read the prompt. It is
	// the runner's reading of claude's first stdout line of the turn
	// (system/init, which claude writes once it has read the user
	// message), sent once per turn, before any other event of it.
	EventBegan
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EventText:
		return "text"
	case EventTextDelta:
		return "text_delta"
	case EventBlockEnd:
		return "block_end"
	case EventToolUse:
		return "tool_use"
	case EventResult:
		return "result"
	case EventPermission:
		return "permission"
	case EventBegan:
		return "began"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing that happened during a turn, delivered in order.
type Event struct {
	Kind EventKind
	// Text is set for EventText and EventTextDelta.
	Text string
	// Tool is set for EventToolUse.
	Tool *ToolUse
	// Result is set for EventResult.
	Result *Result
	// Permission is set for EventPermission.
	Permission *PermissionRequest
	// At is when the runner read the line from claude's stdout.
	At time.Time
}

// ToolUse describes a tool call.
type ToolUse struct {
	// ID is the tool_use id.
	ID string
	// Name is the tool name ("Bash", "Read", an MCP tool ...).
	Name string
	// Summary is a short one-line description of the input (command, path, pattern, URL
	// or description), at most 80 characters; "" when nothing suitable is present.
	Summary string
}

// Usage is the token and cost accounting of one turn, as claude reports it.
type Usage struct {
	InputTokens              int
	OutputTokens             int
	CacheReadInputTokens     int
	CacheCreationInputTokens int
	// CostUSD is the turn's own cost, claude's client-side estimate at list
	// price: the sum of model_usage_since_last_result's costUSD. 0 when
	// claude's result line has no per-turn figure (PerTurnCost false; the
	// caller takes the difference of SessionCostUSD) or there was no
	// result line (Result.UsageSeen).
	CostUSD float64
	// PerTurnCost: CostUSD is claude's figure for this turn.
	PerTurnCost bool
	// SessionCostUSD is claude's total_cost_usd: the running total of the
	// claude session, across --resume — not the turn's cost.
	SessionCostUSD float64
	// Models are the turn's tokens and cost per model (a fallback model
	// has its own entry), when claude reported them per turn.
	Models map[string]ModelUsage
}

// ModelUsage is one model's share of a turn.
type ModelUsage struct {
	InputTokens              int
	OutputTokens             int
	CacheReadInputTokens     int
	CacheCreationInputTokens int
	CostUSD                  float64
}

// PromptTokens is input + cache read + cache creation: the size of the prompt the model saw,
// the number memory-flush decisions use.
func (u Usage) PromptTokens() int {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// Result is the outcome of one turn.
type Result struct {
	// Err is nil on success (claude's is_error false). Otherwise its Kind says why.
	Err *Error
	// Text is claude's final result text ("" when absent, e.g. error_max_turns, abort).
	// For error results it is claude's error message; show Err.Notice instead.
	Text string
	// Streamed is all assistant text delivered as events during the turn (blocks joined
	// with "\n\n"); after an abort or timeout it is the partial reply.
	Streamed string
	// Subtype, TerminalReason and StopReason are claude's fields, for logs.
	Subtype        string
	TerminalReason string
	StopReason     string
	// APIErrorStatus and APIErrorType are set when an API call failed.
	APIErrorStatus int
	APIErrorType   string
	// Usage is the turn's token usage. For a turn cut before claude's
	// result line (aborted, timed out, crashed) it is what claude's
	// messages reported so far, without a cost (UsageSeen).
	Usage Usage
	// UsageSeen is true when Usage was added up from the messages of a
	// turn that ended without a result line: the tokens are a floor (the
	// request in flight may have produced more) and CostUSD is 0.
	UsageSeen bool
	// Model is the model that answered (from modelUsage; the one with most output tokens).
	Model string
	// ContextWindow is that model's context window as claude reports it (0 if unknown).
	ContextWindow int
	// NumTurns is claude's agentic round trips in this turn.
	NumTurns int
	// Duration and APIDuration are claude's duration_ms and duration_api_ms.
	Duration    time.Duration
	APIDuration time.Duration
	// SessionID is the claude session the turn ran in.
	SessionID string
	// SessionReset is true when the session could not be resumed (its transcript was
	// missing) and the turn ran in a fresh session with the same id; tell the user that
	// the earlier conversation is not in context.
	SessionReset bool
	// Compacted is true when claude compacted the conversation during the turn
	// (a system/compact_boundary message was seen); a new memory-flush cycle begins.
	Compacted bool
	// Commands are the slash commands and skills the CLI's system/init
	// listed for this turn; nil when no init line was read.
	Commands *Commands
	// Steered is the number of messages added with Runner.Steer during the turn.
	Steered int
	// NewProcess is true when this turn started a claude process; false when it reused a
	// warm one.
	NewProcess bool
	// PID is the claude process id that ran the turn.
	PID int
	// Wait is how the turn got to claude: how long it waited for a slot, and whether
	// (and why) a process was started for it.
	Wait Wait
}

// wireMsg is one stdout line of claude's stream-json output; only the fields used are
// decoded.
type wireMsg struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
	Event           json.RawMessage `json:"event"`
	Error           json.RawMessage `json:"error"`
	IsAPIError      bool            `json:"is_api_error_message"`
	// APIMessageID names the API message a stream_event line is part of.
	APIMessageID string `json:"api_message_id"`
}

type wireAssistant struct {
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
}

type wireStreamEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
	ContentBlock struct {
		Type string `json:"type"`
	} `json:"content_block"`
}

// wireRateLimit is a rate_limit_event line's rate_limit_info: what the
// API's anthropic-ratelimit-unified-* headers said (a subscription login
// only; with an API key claude emits none).
type wireRateLimit struct {
	Status        string `json:"status"` // allowed, allowed_warning, rejected
	ResetsAt      int64  `json:"resetsAt"`
	RateLimitType string `json:"rateLimitType"`
}

// wireResult is the "result" line.
type wireResult struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	Result         *string  `json:"result"`
	Errors         []string `json:"errors"`
	SessionID      string   `json:"session_id"`
	StopReason     *string  `json:"stop_reason"`
	TerminalReason string   `json:"terminal_reason"`
	APIErrorStatus *int     `json:"api_error_status"`
	APIErrorType   string   `json:"api_error_type"`
	// APIError is "usage_limit_reached" when a subscription's limit
	// refused the request.
	APIError      string  `json:"api_error"`
	NumTurns      int     `json:"num_turns"`
	DurationMS    int64   `json:"duration_ms"`
	DurationAPIMS int64   `json:"duration_api_ms"`
	TotalCostUSD  float64 `json:"total_cost_usd"`
	Usage         struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	// ModelUsage is the claude session's running total per model;
	// SinceLast (model_usage_since_last_result) the turn's own, nil when
	// claude does not report it.
	ModelUsage map[string]wireModelUsage  `json:"modelUsage"`
	SinceLast  *map[string]wireModelUsage `json:"model_usage_since_last_result"`
}

// wireModelUsage is one model's entry of modelUsage and
// model_usage_since_last_result.
type wireModelUsage struct {
	InputTokens              int     `json:"inputTokens"`
	OutputTokens             int     `json:"outputTokens"`
	CacheReadInputTokens     int     `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int     `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int     `json:"contextWindow"`
}

func (r *wireResult) status() int {
	if r.APIErrorStatus == nil {
		return 0
	}
	return *r.APIErrorStatus
}

// text is the result text, or the errors joined when there is none.
func (r *wireResult) text() string {
	if r.Result != nil && *r.Result != "" {
		return *r.Result
	}
	return strings.Join(r.Errors, "; ")
}

// fill copies the result fields into res.
func (r *wireResult) fill(res *Result) {
	if r.Result != nil {
		res.Text = *r.Result
	}
	res.Subtype = r.Subtype
	res.TerminalReason = r.TerminalReason
	if r.StopReason != nil {
		res.StopReason = *r.StopReason
	}
	res.APIErrorStatus = r.status()
	res.APIErrorType = r.APIErrorType
	res.NumTurns = r.NumTurns
	res.Duration = time.Duration(r.DurationMS) * time.Millisecond
	res.APIDuration = time.Duration(r.DurationAPIMS) * time.Millisecond
	res.Usage = Usage{
		InputTokens:              r.Usage.InputTokens,
		OutputTokens:             r.Usage.OutputTokens,
		CacheReadInputTokens:     r.Usage.CacheReadInputTokens,
		CacheCreationInputTokens: r.Usage.CacheCreationInputTokens,
		SessionCostUSD:           r.TotalCostUSD,
	}
	models := r.ModelUsage
	if r.SinceLast != nil {
		res.Usage.PerTurnCost = true
		for name, mu := range *r.SinceLast {
			if res.Usage.Models == nil {
				res.Usage.Models = map[string]ModelUsage{}
			}
			res.Usage.Models[name] = ModelUsage{InputTokens: mu.InputTokens, OutputTokens: mu.OutputTokens,
				CacheReadInputTokens: mu.CacheReadInputTokens, CacheCreationInputTokens: mu.CacheCreationInputTokens, CostUSD: mu.CostUSD}
			res.Usage.CostUSD += mu.CostUSD
		}
		if len(*r.SinceLast) > 0 {
			models = *r.SinceLast // the model that answered this turn
		}
	}
	best := -1
	for name, mu := range models {
		if mu.OutputTokens > best || (mu.OutputTokens == best && name < res.Model) {
			best, res.Model, res.ContextWindow = mu.OutputTokens, name, mu.ContextWindow
		}
	}
	if r.SessionID != "" {
		res.SessionID = r.SessionID
	}
}

// wireCommandLifecycle is a "command_lifecycle" line: claude started or completed a
// queued user message (a steered one, by its uuid).
type wireCommandLifecycle struct {
	CommandUUID string `json:"command_uuid"`
	State       string `json:"state"`
}

// textStream turns the assistant lines of one turn into events and keeps the text
// delivered so far (Result.Streamed). Lines from subagents (parent_tool_use_id set) and
// API error messages are skipped.
type textStream struct {
	blocks  []string        // complete text blocks, from "assistant" messages
	cur     strings.Builder // deltas of the block being streamed (Config.PartialMessages)
	inBlock bool            // the content block being streamed is text
}

// streamEvent handles a "stream_event" line: text deltas and the end of a text block.
func (s *textStream) streamEvent(t *Turn, m wireMsg, at time.Time) {
	if m.ParentToolUseID != nil {
		return
	}
	var ev wireStreamEvent
	if json.Unmarshal(m.Event, &ev) != nil {
		return
	}
	switch ev.Type {
	case "content_block_start":
		s.inBlock = ev.ContentBlock.Type == "text"
		s.cur.Reset()
	case "content_block_delta":
		if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			s.cur.WriteString(ev.Delta.Text)
			t.emit(Event{Kind: EventTextDelta, Text: ev.Delta.Text, At: at})
		}
	case "content_block_stop":
		if s.inBlock {
			t.emit(Event{Kind: EventBlockEnd, At: at})
			s.inBlock = false
		}
	}
}

// assistant handles an "assistant" message: its complete text blocks and tool calls.
func (s *textStream) assistant(t *Turn, m wireMsg, at time.Time) {
	if m.ParentToolUseID != nil || m.IsAPIError || (len(m.Error) > 0 && string(m.Error) != "null") {
		return
	}
	var am wireAssistant
	if json.Unmarshal(m.Message, &am) != nil {
		return
	}
	for _, c := range am.Content {
		switch c.Type {
		case "text":
			if c.Text == "" {
				continue
			}
			s.blocks = append(s.blocks, c.Text)
			s.cur.Reset()
			t.emit(Event{Kind: EventText, Text: c.Text, At: at})
		case "tool_use":
			t.emit(Event{Kind: EventToolUse, Tool: &ToolUse{ID: c.ID, Name: c.Name, Summary: summarizeInput(c.Input)}, At: at})
		}
	}
}

// streamed is the text delivered so far, blocks joined with "\n\n" (a block still
// streaming included).
func (s *textStream) streamed() string {
	all := s.blocks
	if s.cur.Len() > 0 {
		all = append(append([]string(nil), s.blocks...), s.cur.String())
	}
	return strings.Join(all, "\n\n")
}

// summarizeInput picks a short description of a tool input.
func summarizeInput(raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt"} {
		if s, ok := in[k].(string); ok && s != "" {
			return truncate(strings.Join(strings.Fields(s), " "), 80)
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// addModels adds b's per-model usage into a (nil: a new map) and returns
// it.
func addModels(a, b map[string]ModelUsage) map[string]ModelUsage {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]ModelUsage, len(b))
	}
	for name, m := range b {
		s := a[name]
		s.InputTokens += m.InputTokens
		s.OutputTokens += m.OutputTokens
		s.CacheReadInputTokens += m.CacheReadInputTokens
		s.CacheCreationInputTokens += m.CacheCreationInputTokens
		s.CostUSD += m.CostUSD
		a[name] = s
	}
	return a
}

// Commands are the lists of a system/init line: slash_commands (the
// CLI's built-ins, skills and the project's and user's commands),
// skills, and terminal_slash_commands (those it runs only in a terminal).
type Commands struct {
	Slash    []string `json:"slash_commands"`
	Skills   []string `json:"skills"`
	Terminal []string `json:"terminal_slash_commands"`
}
