package hook

import (
	"context"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

// Received is implemented by message_received hook plugins.
type Received interface {
	// MessageReceived is called for an inbound message the host passes to
	// the agent, after access control and dedupe and before the queue, by
	// each instance in config order (each sees what the previous one
	// returned), under messages.hook_timeout (ctx). It may block for that
	// long; the chat's next messages wait, other chats do not. The host
	// records the outcome with the message before acting on it, so it is
	// asked once per message, also across restarts. An error or a timeout
	// skips the hook, or drops the message when the plugin block says
	// on_error = "drop". The zero Response passes the message unchanged.
	MessageReceived(ctx context.Context, req ReceivedRequest) (ReceivedResponse, error)
}

// ReceivedRequest is an inbound message on its way to the queue.
type ReceivedRequest struct {
	// CallID identifies the message on the host (its journal entry).
	CallID       string
	Conversation command.Conversation
	Sender       channel.Sender
	// Text is the message's text as the previous hook left it.
	Text string
	// Attachments are the message's media, saved on the host (absolute
	// paths inside the agent's workspace).
	Attachments []Attachment
	// MessageID is the platform's id of the message; Timestamp its time.
	MessageID string
	Timestamp time.Time
}

// Note is text a message_received hook adds to a message.
type Note struct {
	// Attachment is the Path of the attachment the note is about (a voice
	// note's transcript); empty for a note on the message as a whole.
	Attachment string
	// Label heads the note in the prompt ("Voice note transcript").
	Label string
	Text  string
	// Replace, with Attachment set, removes that attachment from the
	// message: the note stands for it (the transcript replaces the audio).
	Replace bool
}

// ReceivedResponse is a message_received hook's decision.
type ReceivedResponse struct {
	// Rewrite replaces the message's text by Text ("" is allowed: a
	// message of attachments only).
	Rewrite bool
	Text    string
	// Notes are added to the message, in order.
	Notes []Note
	// Drop drops the message: the agent never sees it and the sender is
	// told DropReason (a generic sentence when empty).
	Drop       bool
	DropReason string
	// Step is one short line saying what the hook did and how long it took
	// ("🎙 transcribed 12 s of audio in 1.4 s"): the chat's turn card shows
	// it as a step, /status as the hook's last work. Empty: nothing.
	Step string
}

// Sending is implemented by message_sending hook plugins.
type Sending interface {
	// MessageSending is called for an agent's reply before it is recorded
	// in the outbox, by each instance in config order, under
	// messages.hook_timeout (ctx). What the hooks return is what is
	// recorded and sent, once: a restart delivers the recorded reply and
	// never asks again. An error or a timeout leaves the reply as the
	// previous hook left it. The zero Response sends the reply unchanged.
	MessageSending(ctx context.Context, req SendingRequest) (SendingResponse, error)
}

// SendingRequest is a reply on its way to the outbox.
type SendingRequest struct {
	// CallID identifies the reply on the host (its journal entry).
	CallID       string
	Conversation command.Conversation
	// Agent is the id of the agent that wrote the reply ("" the default).
	Agent string
	// Text is the reply as the previous hook left it, in Format.
	Text   string
	Format channel.Format
	// VoiceNoteFormat is the reply's channel's
	// channel.Capabilities.VoiceNoteFormat: the audio format a spoken reply
	// should take to show as a voice note there; "" for none (send an audio
	// file).
	VoiceNoteFormat string
}

// MediaFile is a file a hook adds to a reply, by value: the host saves it
// in the conversation's media directory and sends it with the reply.
type MediaFile struct {
	Filename string
	MIME     string
	Data     []byte
	// Kind is the media kind; empty: decided from Filename.
	Kind channel.MediaKind
}

// SendingResponse is a message_sending hook's decision.
type SendingResponse struct {
	// Rewrite replaces the reply's text by Text.
	Rewrite bool
	Text    string
	// Media are sent with the reply (a voice note, a rendered table),
	// within the channel's file size limit.
	Media []MediaFile
	// Suppress sends nothing: the message counts as answered.
	Suppress bool
	// Step is one short line saying what the hook did and how long it took
	// ("🔊 spoken in 0.8 s"); /status shows it as the hook's last work.
	Step string
}

// Ender is implemented by agent_end hook plugins.
type Ender interface {
	// AgentEnd is called after a turn's reply was recorded, off the reply's
	// path (the reply never waits for it), under messages.hook_timeout.
	// Delivery is at least once: a call that fails or times out is repeated
	// later with the same End.CallID, the idempotency key.
	AgentEnd(ctx context.Context, end End) error
}

// Outcome is how a turn ended.
type Outcome string

// Outcomes of a turn.
const (
	OutcomeOK      Outcome = "ok"       // a reply was recorded
	OutcomeNoReply Outcome = "no_reply" // the agent chose not to answer (or a hook suppressed it)
	OutcomeError   Outcome = "error"    // the turn failed; ReplyText is what the chat was told
	OutcomeAborted Outcome = "aborted"  // stopped (/stop, a reset)
)

// ToolStep is one tool call of a turn.
type ToolStep struct {
	// Name is the tool's name ("Bash", "Read", an MCP tool's full name).
	Name string
	// Summary describes the input in one line of at most 80 characters
	// (the command, path, pattern or URL); "" when nothing suitable is
	// there.
	Summary string
}

// End describes a finished turn.
type End struct {
	// CallID is the idempotency key: the same on every delivery of this
	// turn's end.
	CallID       string
	Conversation command.Conversation
	Sender       channel.Sender
	Agent        string
	SessionID    string
	Outcome      Outcome
	// ReplyText is the reply as recorded (after message_sending hooks).
	ReplyText    string
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	ToolSteps    []ToolStep
	Duration     time.Duration
}
