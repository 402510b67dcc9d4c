package webchat

import "time"

// The page and the plugin talk JSON over one WebSocket at /ws. The plugin
// sends Events, the page sends ClientFrames.
//
// Every event of one chat that changes what the page shows ("message",
// "update", "typing") carries the chat's next sequence number, one more than
// the previous. A page applies events in that order, ignores ones it has
// seen, and on a gap reconnects: the "hello" that starts every connection
// carries the whole history and the current sequence number, so a
// reconnect is a full resync.

// Event types, plugin → page.
const (
	// EventHello starts every connection: history, typing state,
	// commands, limits and the current sequence number.
	EventHello = "hello"
	// EventMessage adds a message.
	EventMessage = "message"
	// EventUpdate replaces a message (an edit of a draft, or the delivery
	// status of a user message).
	EventUpdate = "update"
	// EventTyping shows or clears the typing indicator.
	EventTyping = "typing"
	// EventCommands replaces the command buttons; it is not sequenced.
	EventCommands = "commands"
	// EventError reports a problem with one ClientFrame of this
	// connection (ClientID); it is not sequenced.
	EventError = "error"
)

// Message roles.
const (
	// RoleUser marks a message written in the page.
	RoleUser = "user"
	// RoleBot marks a message the host sent.
	RoleBot = "bot"
)

// Delivery states of a user message.
const (
	// StatusSending: handed to the host, not yet stored by it.
	StatusSending = "sending"
	// StatusSent: the host stored the message (Inbox.Deliver returned).
	StatusSent = "sent"
	// StatusFailed: the host could not take the message.
	StatusFailed = "failed"
)

// Message is one message as the page shows it.
type Message struct {
	// ID is the message id: InboundMessage.MessageID for user messages, the
	// id Send returned for bot messages.
	ID string `json:"id"`
	// Seq orders the messages of a chat: it is the sequence number of the
	// event that added the message.
	Seq uint64 `json:"seq"`
	// Role is RoleUser or RoleBot.
	Role string `json:"role"`
	// HTML is the rendered, sanitized body; safe to assign to innerHTML.
	HTML string `json:"html"`
	// Status is the delivery state of a user message; empty for bot
	// messages.
	Status string `json:"status,omitempty"`
	// Edited is true once a bot message was edited.
	Edited bool `json:"edited,omitempty"`
	// ClientID echoes ClientFrame.ClientID of the frame that created a user
	// message, so the sending tab can match it.
	ClientID string `json:"client_id,omitempty"`
	// Time is when the message was created.
	Time time.Time `json:"time"`
	// Buttons are shown under a bot message, row by row, until the host
	// edits the message (or a press was taken: Pressed names the button's
	// id and the buttons show disabled).
	Buttons [][]Button `json:"buttons,omitempty"`
	Pressed string     `json:"pressed,omitempty"`
	// Files are the message's files: uploaded with a user message, sent
	// with a bot message; each downloads at /files/{id}.
	Files []File `json:"files,omitempty"`
}

// Button is a button under a bot message.
type Button struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Command is one command button of the page.
type Command struct {
	// Text is what the button sends, e.g. "/new".
	Text string `json:"text"`
	// Description is the button's tooltip.
	Description string `json:"description,omitempty"`
}

// Event is one frame from the plugin to the page.
type Event struct {
	// Type is one of the Event* constants.
	Type string `json:"type"`
	// Seq is the chat's sequence number after this event; zero for
	// unsequenced events (commands, error).
	Seq uint64 `json:"seq,omitempty"`
	// Message is set for message and update.
	Message *Message `json:"message,omitempty"`
	// History is the conversation, oldest first (hello).
	History []Message `json:"history,omitempty"`
	// Typing is the typing indicator state (hello, typing).
	Typing bool `json:"typing,omitempty"`
	// Commands are the command buttons (hello, commands).
	Commands []Command `json:"commands,omitempty"`
	// Title is the page title (hello).
	Title string `json:"title,omitempty"`
	// MaxBytes is the longest text a ClientFrame may carry, in UTF-8 bytes
	// (hello).
	MaxBytes int `json:"max_bytes,omitempty"`
	// ClientID names the ClientFrame an error is about.
	ClientID string `json:"client_id,omitempty"`
	// Error is a human-readable problem (error).
	Error string `json:"error,omitempty"`
}

// Client frame types, page → plugin.
const (
	// FrameSend sends Text as the user's message.
	FrameSend = "send"
	// FramePress presses button ButtonID under message MessageID.
	FramePress = "press"
)

// ClientFrame is one frame from the page to the plugin.
type ClientFrame struct {
	// Type is FrameSend.
	Type string `json:"type"`
	// ClientID is chosen by the page to match errors and echoes.
	ClientID string `json:"client_id,omitempty"`
	// Text is the message, at most MaxInboundBytes of UTF-8.
	Text string `json:"text"`
	// MessageID and ButtonID name the pressed button (press).
	MessageID string `json:"message_id,omitempty"`
	ButtonID  string `json:"button_id,omitempty"`
}
