// Package hook is the contract of the hook plugins: before_agent_start
// ([Hook], context prepended to the prompt of every agent turn) and the
// lifecycle hooks message_received ([Received]: pass, rewrite, add notes
// to or drop an inbound message before the queue), message_sending
// ([Sending]: rewrite, add media to or suppress a reply before the outbox)
// and agent_end ([Ender]: observe a finished turn, at least once). A
// plugin offers any of them through the fields of sdk.Plugin.
package hook

import (
	"context"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

// Hook is implemented by hook plugins.
type Hook interface {
	// BeforeAgentStart is called before every agent turn, concurrently with
	// the other hooks and under a per-hook timeout (ctx). A failing or slow
	// hook is logged and skipped; the turn goes on.
	BeforeAgentStart(ctx context.Context, req Request) (Response, error)
}

// Request describes the turn about to start.
type Request struct {
	Conversation command.Conversation
	Sender       channel.Sender
	// Message is the user's message text (before the envelope).
	Message string
	// NewSession is true for the first turn of a session.
	NewSession bool
	// Workspace is the agent's working directory (absolute).
	Workspace string
	// SessionID is the agent's session id for this turn (claude's
	// --session-id/--resume uuid).
	SessionID string
	// Attachments are the message's media, already saved on the host.
	Attachments []Attachment
}

// Attachment is an inbound media item saved on the host.
type Attachment struct {
	Kind channel.MediaKind
	// Path is absolute, inside Workspace.
	Path     string
	MIME     string
	Filename string
	Size     int64
}

// Response is what the hook adds. Empty strings add nothing.
type Response struct {
	// PrependContext is placed before the user's message.
	PrependContext string
	// SystemPrompt is appended to the agent's system prompt.
	SystemPrompt string
}
