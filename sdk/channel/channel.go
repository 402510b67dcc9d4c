// Package channel is the contract of a channel plugin: the Go interface a
// chat-platform adapter implements and the plain types it exchanges with the
// host.
//
// A channel translates, nothing more. It turns platform events into
// InboundMessages and hands them to the host through an Inbox; it posts what
// the host asks it to Send. It never decides sessions, splitting, retries or
// who may talk to the agent: the host does.
//
// Required: Channel. Optional capabilities are optional interfaces (Typer,
// Editor, Reactor, MediaDownloader, CommandMenu); the host discovers them, so
// implement only what the platform supports and guard with
//
//	var _ channel.Typer = (*Adapter)(nil)
package channel

import (
	"context"
	"io"
	"strings"
	"time"
)

// Channel is implemented by every channel plugin.
type Channel interface {
	// Capabilities describes the platform's limits. Called once after
	// Configure; must not block.
	Capabilities() Capabilities

	// Run receives from the platform until ctx is canceled, handing each
	// message to inbox.Deliver. It is called once, after Configure succeeded.
	// Deliver returns only when the host has durably stored the messages, so
	// a plugin advances platform offsets (Telegram's getUpdates offset) only
	// after Deliver returned nil. Returning a non-nil error other than
	// ctx.Err() ends the plugin process; the host restarts it with backoff.
	Run(ctx context.Context, inbox Inbox) error

	// Send posts one message. The host has already split text to
	// Capabilities().MaxTextLength. Business failures are returned as *Error
	// with a stable Code. Send may be called concurrently for different chats.
	//
	// The contract, checked by sdktest.Conformance:
	//   - a text of exactly MaxTextLength units, counted in LengthUnit, is
	//     accepted whatever its characters (emoji are 2 UTF-16 units, 1
	//     rune, 4 bytes);
	//   - a longer text is refused with CodeMessageTooLong or sent as more
	//     than one message (one id each in SendResponse.MessageIDs); it is
	//     never truncated or accepted as one message the platform will cut;
	//   - a chat the platform does not know, or the bot is not in, fails
	//     with CodeChatNotFound: the host then gives up on the reply instead
	//     of retrying it.
	Send(ctx context.Context, req SendRequest) (SendResponse, error)
}

// Inbox is the host side of inbound delivery.
type Inbox interface {
	// Deliver hands messages to the host and blocks until the host has
	// durably stored all of them (nil), or ctx ends, or the plugin is
	// stopping (error). Messages not yet stored are redelivered to the host
	// after a reconnect, so the host may see a message twice; it dedupes.
	//
	// When the host cannot store them (its journal is locked, its disk is
	// full) it says so (a nack, with how long to wait); the sdk holds the
	// messages, sends them again after that delay — the host grows it while
	// its store keeps failing — and Deliver keeps blocking meanwhile. A
	// failing store therefore slows Deliver down but never makes it fail or
	// hang for good: the plugin needs no retry loop of its own, and a
	// platform offset stays where it was until Deliver returns nil. Pass a
	// ctx with a deadline if the platform cannot wait (a webhook answer).
	Deliver(ctx context.Context, msgs ...InboundMessage) error
}

// Offer hands messages to the host like Inbox.Deliver, for a platform that
// keeps a message until the plugin acknowledges it (a poll whose offset
// stays where it is, a webhook answered with a retry status): when the
// host cannot store them it returns at once with an *Error of code
// CodeUnavailable whose RetryAfter is the delay the host asked for, and
// the sdk forgets them — the platform's redelivery is the retry. Acknowledge
// the platform only after Offer returned nil. A platform that does not
// redeliver (a gateway event) uses Deliver, which holds the messages and
// retries by itself. An Inbox without Offer (a test's fake) is used through
// Deliver.
func Offer(ctx context.Context, in Inbox, msgs ...InboundMessage) error {
	if o, ok := in.(interface {
		Offer(ctx context.Context, msgs ...InboundMessage) error
	}); ok {
		return o.Offer(ctx, msgs...)
	}
	return in.Deliver(ctx, msgs...)
}

// ChatType is the kind of conversation.
type ChatType string

// Chat types.
const (
	ChatDirect  ChatType = "direct"
	ChatGroup   ChatType = "group"
	ChatChannel ChatType = "channel"
)

// MediaKind is the kind of an attachment.
type MediaKind string

// Media kinds.
const (
	MediaImage    MediaKind = "image"
	MediaAudio    MediaKind = "audio"
	MediaVoice    MediaKind = "voice"
	MediaVideo    MediaKind = "video"
	MediaDocument MediaKind = "document"
	MediaSticker  MediaKind = "sticker"
)

// MediaKindOf is the kind of an attachment by its MIME type alone: image/*
// an image, audio/* audio, video/* a video, anything else (or "") a
// document. A voice note or a sticker is not told by its type: a channel
// that knows one sets MediaVoice or MediaSticker itself.
func MediaKindOf(mimeType string) MediaKind {
	switch {
	case strings.HasPrefix(mimeType, "image/"):
		return MediaImage
	case strings.HasPrefix(mimeType, "audio/"):
		return MediaAudio
	case strings.HasPrefix(mimeType, "video/"):
		return MediaVideo
	}
	return MediaDocument
}

// Sender is who wrote a message.
type Sender struct {
	// ID is the platform's stable id of the sender; access lists use it
	// as "<instance>:<ID>".
	ID       string
	Name     string
	Username string
	IsBot    bool
	// AltIDs are other stable ids of the same sender, when the platform
	// has more than one (WhatsApp: the phone number as ID, the LID here).
	// Access lists match "<instance>:<ID>" or any "<instance>:<alt id>", so
	// an entry written with either form admits the sender. Nil: none.
	AltIDs []string `json:",omitempty"`
}

// ReplyTo is the message an inbound message answers.
type ReplyTo struct {
	MessageID  string
	Text       string
	SenderID   string
	SenderName string
	// ToBot is true when the replied-to message is the bot's own.
	ToBot bool
}

// Media is an inbound attachment. The host fetches its bytes with
// MediaDownloader.DownloadMedia(Ref).
type Media struct {
	Kind     MediaKind
	Ref      string
	MIME     string
	Size     int64
	Filename string
	Caption  string
}

// InboundMessage is one message from the platform, normalized.
type InboundMessage struct {
	ChatType ChatType
	ChatID   string
	// ThreadID is the thread or forum topic; empty when none.
	ThreadID  string
	MessageID string
	Sender    Sender
	// Text is the message body (a caption when the message is media only).
	Text string
	// CommandText is Text with the bot's own mention removed ("/cmd@bot" →
	// "/cmd"); empty means the same as Text.
	CommandText string
	// WasMentioned: the bot was mentioned, or the message replies to the bot.
	WasMentioned bool
	ReplyTo      *ReplyTo
	Media        []Media
	// Timestamp is the platform's time of the message.
	Timestamp time.Time
	ChatTitle string
	// Edited marks an edit of an earlier message.
	Edited bool
	// OversizeBytes is set by the sdk, never by a plugin: the message was
	// too large to hand to the host (its encoded size, over the inbox's
	// limit), so the host got a stub of it — ids, sender, time, title and
	// WasMentioned, without text, reply or media — and tells the sender it
	// was skipped. Deliver still returns nil once the stub is stored, so
	// the plugin moves on.
	OversizeBytes int64
	// Action, when set, makes this a press of a button the host sent
	// (Capabilities.Buttons), not a typed message: MessageID is a unique
	// id of the press (the host dedupes on it), Text the button's label,
	// Sender who pressed.
	Action *Action
	// Forward, when set, says Text (and Media) were forwarded from another
	// message: Sender shows them but did not write them. The host puts
	// such text in the prompt as untrusted content and never reads it as
	// a command. Nil: the sender's own message.
	Forward *Forward
	// ThreadContext, for a message in a thread or forum topic, is what the
	// thread hangs from: the parent post first, then the thread's earlier
	// messages, oldest first (not the message itself). A channel may
	// attach it to every message of a thread or only to the first it
	// sees; the host uses it on the first turn of the thread's session
	// only, fenced as context. Nil: none, or the platform cannot say.
	ThreadContext []ReplyTo
	// Invite, when set, makes this an invitation of the bot to ChatID by
	// Sender (see Invite); Text is empty.
	Invite *Invite
}

// Forward describes where a forwarded message came from.
type Forward struct {
	// From names the original author or chat (a user's name, a channel's
	// title); empty when the platform hides it.
	From string
	// Date is when the original was sent; zero when unknown.
	Date time.Time
}

// Action is a pressed button.
type Action struct {
	// ButtonID is the Button.ID pressed. It came from the user's client:
	// the host treats it as untrusted, like typed text.
	ButtonID string
	// MessageID is the platform id of the message the button was on.
	MessageID string
}

// Button is one button under a sent message.
type Button struct {
	// ID comes back in Action.ButtonID: at most MaxButtonID bytes of
	// printable ASCII.
	ID string
	// Label is the button's text, short.
	Label string
}

// MaxButtonID is the longest Button.ID, in bytes (Telegram's callback_data
// limit).
const MaxButtonID = 64

// Format is how outbound text is written (SendRequest.Format).
type Format string

// Formats of outbound text.
const (
	// FormatPlain is text shown as it is.
	FormatPlain Format = "plain"
	// FormatMarkdown is the agent's markdown, to be rendered by the channel
	// in its Capabilities().Markup kind.
	FormatMarkdown Format = "markdown"
)

// OutboundMedia is a file to send.
type OutboundMedia struct {
	// Path is a local file path the host vouches for.
	Path    string
	Kind    MediaKind
	MIME    string
	Caption string
	// CaptionRendered, when not nil (the send's Format markdown), is
	// Caption as the host rendered it for the channel (see
	// SendRequest.Rendered).
	CaptionRendered *Rendered
}

// SendRequest is one message to post.
type SendRequest struct {
	ChatID           string
	ThreadID         string
	ReplyToMessageID string
	Text             string
	// Format is FormatPlain or FormatMarkdown (to be rendered by the
	// channel in its Capabilities().Markup kind).
	Format             Format
	Media              []OutboundMedia
	DisableLinkPreview bool
	Silent             bool
	// Buttons (Capabilities.Buttons) are shown under the message, row by
	// row; when the text is sent as more than one message they go under
	// the last one.
	Buttons [][]Button
	// Rendered, when not nil (Format markdown only), is Text as the host
	// rendered it for the channel: a plugin sends it (Rendered.Of) instead
	// of parsing Text itself. clawhost sets it on every markdown send to a
	// channel whose Capabilities.Markup the markup module renders (every
	// kind but MarkupNone), so a plugin need not link a markdown parser;
	// the bundled plugins send Text as plain text when it is nil. A plugin
	// that renders with the markup module may take it through
	// markup.RenderVisibleFrom.
	Rendered *Rendered
}

// Rendered is a markdown text rendered by the host with the markup module
// for a channel's declared markup (SendRequest.Rendered).
type Rendered struct {
	// Markup is the kind it is rendered for (the channel's
	// Capabilities.Markup); a plugin uses the rendering only when it is
	// the one it would make itself.
	Markup Markup
	// Text is the rendering (markup.Render); Visible is what a reader sees
	// of it (markup.Visible: for MarkupHTMLSubset without tags, entities
	// decoded; else Text), the measure of the length limit.
	Text, Visible string
}

// Of returns the rendering and its visible text when r is one for the
// markup kind m (the channel's Capabilities.Markup); ok is false when r is
// nil or rendered for another kind, and the caller then sends the source
// text as plain text (or renders it itself).
func (r *Rendered) Of(m Markup) (text, visible string, ok bool) {
	if r == nil || r.Markup != m {
		return "", "", false
	}
	return r.Text, r.Visible, true
}

// SendResponse is the result of a successful Send.
type SendResponse struct {
	// MessageIDs are the platform ids of the posted messages, in order.
	MessageIDs []string
}

// Typer is implemented by channels that can show "typing…".
type Typer interface {
	// SetTyping shows (On) or clears the typing indicator. The host refreshes
	// it every few seconds while the agent works.
	SetTyping(ctx context.Context, req TypingRequest) error
}

// TypingRequest addresses a typing indicator.
type TypingRequest struct {
	ChatID   string
	ThreadID string
	On       bool
}

// Editor is implemented by channels that can edit sent messages; the host
// uses it for live drafts.
type Editor interface {
	Edit(ctx context.Context, req EditRequest) error
}

// EditRequest replaces the text of a message sent earlier. Buttons the
// message had are removed (an answered question keeps none).
type EditRequest struct {
	ChatID    string
	ThreadID  string
	MessageID string
	Text      string
	Format    Format
	// Buttons (Capabilities.Buttons) are the message's buttons after the
	// edit, row by row: an edit sets them, and an edit without buttons
	// leaves the message with none (a live turn card's Stop button goes
	// when the card becomes the answer).
	Buttons [][]Button
	// Rendered, when not nil (Format markdown only), is Text as the host
	// rendered it for the channel (see SendRequest.Rendered).
	Rendered *Rendered
}

// Offerer is implemented by a channel whose optional interfaces work only
// with some configurations: a bridge to another program, whose tools
// decide (the mcp-channel plugin: a server without edit_message cannot
// edit). The host uses an optional interface the channel implements only
// where Offered says so; without Offerer every one it implements is used.
type Offerer interface {
	// Offered is called after Configure, like Capabilities; it must not
	// block.
	Offered() Offered
}

// Offered says which of the optional interfaces a channel implements work
// as configured (Offerer).
type Offered struct {
	Typing      bool
	Edit        bool
	Reactions   bool
	CommandMenu bool
	// CommandMenuPerChat: SetChatCommands works as configured (it needs
	// CommandMenu too).
	CommandMenuPerChat bool
}

// Reactor is implemented by channels that support reactions.
type Reactor interface {
	React(ctx context.Context, req ReactRequest) error
}

// ReactRequest adds or removes a reaction.
type ReactRequest struct {
	ChatID string
	// ThreadID is the thread or topic the message is in ("" none).
	ThreadID  string
	MessageID string
	Emoji     string
	Remove    bool
}

// MediaDownloader is implemented by channels that receive media.
type MediaDownloader interface {
	// DownloadMedia opens the bytes of Media.Ref. It fails with
	// CodeMessageTooLong when the size exceeds MaxBytes (if > 0).
	DownloadMedia(ctx context.Context, req DownloadRequest) (io.ReadCloser, MediaInfo, error)
}

// DownloadRequest asks for the bytes of an inbound media item.
type DownloadRequest struct {
	Ref      string
	MaxBytes int64
}

// MediaInfo describes downloaded bytes.
type MediaInfo struct {
	MIME string
	// Size is -1 when unknown.
	Size int64
}

// CommandMenu is implemented by channels that show a command menu.
type CommandMenu interface {
	// SetCommands replaces the menu with the host's commands.
	SetCommands(ctx context.Context, cmds []MenuEntry) error
}

// ChatCommandMenu is implemented by channels that show a command menu per
// chat as well (Telegram's BotCommandScopeChat): the host sends a chat
// bound to, or switched to, another agent than the default its own menu
// (capability command_menu_per_chat). A channel without it shows every
// chat the default menu (CommandMenu).
type ChatCommandMenu interface {
	CommandMenu
	// SetChatCommands replaces the menu of one chat.
	SetChatCommands(ctx context.Context, menu ChatMenu) error
}

// ChatMenu is the command menu of one chat.
type ChatMenu struct {
	// ChatID is the chat, as InboundMessage.ChatID reports it.
	ChatID   string
	Commands []MenuEntry
}

// MenuEntry is one command of a command menu.
type MenuEntry struct {
	Name        string
	Description string
}

// Sleep waits d, or until ctx ends (then it returns ctx.Err()); d <= 0
// returns at once. A channel's Run waits so between attempts, so that a
// host stopping the plugin never waits for a backoff to end.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
