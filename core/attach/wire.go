package attach

// Frame is one JSON message on the attach endpoint's websocket, between
// `clawhost channel` (the terminal) and the host. Type says which fields
// are set.
type Frame struct {
	Type string `json:"type"`
	// ID names a chat turn (FrameMessage, FrameStopped).
	ID string `json:"id,omitempty"`
	// Content and Meta are a chat message for the terminal claude
	// (notifications/claude/channel's params).
	Content string            `json:"content,omitempty"`
	Meta    map[string]string `json:"meta,omitempty"`
	// Call numbers a reply (FrameReply, FrameReplied); Error is why a
	// call, or the attachment (FrameRefused), failed.
	Call  int64  `json:"call,omitempty"`
	Error string `json:"error,omitempty"`
	// Text and Files are a reply.
	Text  string   `json:"text,omitempty"`
	Files []string `json:"files,omitempty"`
	// A permission prompt (FramePermissionRequest) and its answer
	// (FramePermission), as Claude Code's permission relay words them.
	RequestID    string `json:"request_id,omitempty"`
	ToolName     string `json:"tool_name,omitempty"`
	Description  string `json:"description,omitempty"`
	InputPreview string `json:"input_preview,omitempty"`
	Behavior     string `json:"behavior,omitempty"`
	// The terminal's hello: its claude session and transcript.
	SessionID  string `json:"session_id,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	// Chat is the chat attached to (FrameAttached).
	Chat string `json:"chat,omitempty"`
}

// Frame types.
const (
	// terminal → host
	FrameHello             = "hello"
	FrameReply             = "reply"
	FramePermissionRequest = "permission_request"
	// host → terminal
	FrameAttached   = "attached"
	FrameRefused    = "refused"
	FrameMessage    = "message"
	FrameReplied    = "replied"
	FramePermission = "permission"
	FrameStopped    = "stopped"
	FrameDetached   = "detached"
)
