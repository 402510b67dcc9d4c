package discordtest

import (
	"encoding/json"
	"time"
)

// Channel types (Discord's numbers).
const (
	ChannelGuildText     = 0
	ChannelDM            = 1
	ChannelPublicThread  = 11
	ChannelPrivateThread = 12
)

// Gateway intents the fake looks at.
const (
	IntentGuilds         = 1 << 0
	IntentGuildMessages  = 1 << 9
	IntentDirectMessages = 1 << 12
	// IntentMessageContent is privileged: without it (and unless
	// SetMessageContentAllowed(true)) IDENTIFY is closed with 4014.
	IntentMessageContent = 1 << 15
)

// MessageFlagVoice marks a voice message (IS_VOICE_MESSAGE).
const MessageFlagVoice = 1 << 13

// User is a Discord user.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	// GlobalName is the display name; empty when unset.
	GlobalName string `json:"global_name,omitempty"`
	Bot        bool   `json:"bot,omitempty"`
}

// Channel is a text channel, DM or thread.
type Channel struct {
	ID      string `json:"id"`
	Type    int    `json:"type"`
	GuildID string `json:"guild_id,omitempty"`
	Name    string `json:"name,omitempty"`
	// ParentID is the channel a thread belongs to.
	ParentID string `json:"parent_id,omitempty"`
	// OwnerID is who created a thread.
	OwnerID string `json:"owner_id,omitempty"`
}

// Attachment is a file attached to a message.
type Attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type,omitempty"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
}

// MessageReference points at another message (a reply).
type MessageReference struct {
	MessageID       string `json:"message_id,omitempty"`
	ChannelID       string `json:"channel_id,omitempty"`
	GuildID         string `json:"guild_id,omitempty"`
	FailIfNotExists *bool  `json:"fail_if_not_exists,omitempty"`
}

// Message is a message as the gateway and REST carry it.
type Message struct {
	ID               string            `json:"id"`
	ChannelID        string            `json:"channel_id"`
	GuildID          string            `json:"guild_id,omitempty"`
	Author           User              `json:"author"`
	Content          string            `json:"content"`
	Timestamp        time.Time         `json:"timestamp"`
	EditedTimestamp  *time.Time        `json:"edited_timestamp"`
	Mentions         []User            `json:"mentions"`
	MentionRoles     []string          `json:"mention_roles"`
	Attachments      []Attachment      `json:"attachments"`
	Flags            int               `json:"flags,omitempty"`
	MessageReference *MessageReference `json:"message_reference,omitempty"`
	// ReferencedMessage is the message replied to.
	ReferencedMessage *Message `json:"referenced_message,omitempty"`
	// WebhookID is set on interaction responses and follow-ups.
	WebhookID string `json:"webhook_id,omitempty"`
	// Components are the message's action rows of buttons; empty, not
	// nil, on a stored message.
	Components []ActionRow `json:"components"`
}

// ActionRow is a row of components (Type ComponentActionRow).
type ActionRow struct {
	Type       int         `json:"type"`
	Components []Component `json:"components"`
}

// Component is a button (Type ComponentButton) in an action row: Style
// ButtonPrimary … ButtonDanger, Label its text, CustomID what a press
// reports.
type Component struct {
	Type     int    `json:"type"`
	Style    int    `json:"style,omitempty"`
	Label    string `json:"label,omitempty"`
	CustomID string `json:"custom_id,omitempty"`
}

// CommandOption is an option of an application command (or its value in
// an interaction).
type CommandOption struct {
	Name        string `json:"name"`
	Type        int    `json:"type"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Value       any    `json:"value,omitempty"`
}

// Command is an application (slash) command as registered by the bot.
type Command struct {
	ID          string          `json:"id,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Type        int             `json:"type,omitempty"`
	Options     []CommandOption `json:"options,omitempty"`
}

// Interaction is an INTERACTION_CREATE: a slash command (Type
// InteractionApplicationCommand, Data.Name and Data.Options) or a button
// press (Type InteractionMessageComponent, Data.CustomID and
// Data.ComponentType, Message).
type Interaction struct {
	ID            string `json:"id"`
	ApplicationID string `json:"application_id"`
	Type          int    `json:"type"`
	Token         string `json:"token"`
	ChannelID     string `json:"channel_id"`
	GuildID       string `json:"guild_id,omitempty"`
	Data          struct {
		ID      string          `json:"id,omitempty"`
		Name    string          `json:"name,omitempty"`
		Type    int             `json:"type,omitempty"`
		Options []CommandOption `json:"options,omitempty"`
		// CustomID and ComponentType are set for a button press (type 3).
		CustomID      string `json:"custom_id,omitempty"`
		ComponentType int    `json:"component_type,omitempty"`
	} `json:"data"`
	// Message is the message whose button was pressed (type 3).
	Message *Message `json:"message,omitempty"`
	// Member is set in a guild, User in a DM.
	Member *struct {
		User User `json:"user"`
	} `json:"member,omitempty"`
	User *User `json:"user,omitempty"`
	// Version is always 1.
	Version int `json:"version"`
}

// Sent is one thing the bot made appear in a channel: a message created
// (Method "create"), an edit ("edit"), an interaction's original response
// edited ("original") or a follow-up ("followup").
type Sent struct {
	Method    string
	ChannelID string
	MessageID string
	Content   string
	// Reference is the message_reference of a created message.
	Reference *MessageReference
	// AllowedMentions is the raw allowed_mentions object (nil: absent).
	AllowedMentions json.RawMessage
	Files           []UploadedFile
	// Interaction is the interaction id of a webhook message.
	Interaction string
	Time        time.Time
	// Components are the rows sent (nil: the field was absent or null;
	// an edit with an empty list or null clears the message's buttons,
	// without the field keeps them).
	Components []ActionRow
}

// UploadedFile is a file of a multipart message.
type UploadedFile struct {
	Field    string
	Filename string
	MIME     string
	Data     []byte
}

// Request is one recorded REST call.
type Request struct {
	// Route is the route's name (the Route* constants).
	Route  string
	Method string
	Path   string
	Body   []byte
	Time   time.Time
}

// Failure is a scripted error answer of a route.
type Failure struct {
	// Status is the HTTP status (429, 400, 403, 500 …).
	Status int
	// Code is Discord's JSON error code (50035, 50013 …); 0 for none.
	Code    int
	Message string
	// RetryAfter is sent with a 429.
	RetryAfter time.Duration
	// LoseAnswer carries the request out and then closes the connection
	// without answering (the answer lost on the way back); Status and Code
	// are ignored.
	LoseAnswer bool
}

// Callback is an accepted interaction callback (POST
// /interactions/{id}/{token}/callback); refused ones are only in
// Requests(RouteCallback).
type Callback struct {
	Interaction string
	Token       string
	Type        int
	Time        time.Time
}
