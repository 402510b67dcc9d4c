package channel

import "time"

// Capabilities describe a channel's limits and formatting.
type Capabilities struct {
	// MaxTextLength is the longest text one Send may carry, in LengthUnit.
	// Zero means 4000. Declare what the platform really takes: the host
	// splits to it, and Send must accept it (see Channel.Send).
	MaxTextLength int
	// LengthUnit is how MaxTextLength is counted: LengthUTF16 (default;
	// Telegram, Discord and browsers count so), LengthRunes or LengthBytes.
	// Count in the same unit in Send.
	LengthUnit LengthUnit
	// Markup is the kind of markup the channel shows text of Format
	// FormatMarkdown in (the markup module renders each kind). The host
	// splits a reply so that every message, rendered in this kind, fits
	// MaxTextLength: Send renders and sends, it never splits again. With
	// MarkupNone (the default) the host renders the agent's markdown to
	// plain text itself and sends FormatPlain.
	Markup Markup
	// Threads: the platform has threads or topics (InboundMessage.ThreadID).
	Threads bool
	// Groups: the platform has group chats.
	Groups bool
	// MediaIn and MediaOut list the media kinds received and sent.
	MediaIn  []MediaKind
	MediaOut []MediaKind
	// DisplayName is the platform's name for people ("Telegram"); the host
	// uses it as the envelope label. Empty means the plugin's name.
	DisplayName string
	// MaxLines is a soft limit of lines per message (Discord: 17): the host
	// splits longer replies there, reopening code fences. Zero means none.
	MaxLines int
	// Buttons: Send shows SendRequest.Buttons under the message (inline
	// keyboards, components) and a press comes back as an InboundMessage
	// with Action set. Without it the host asks for a typed answer.
	Buttons bool
	// MaxFileBytes is the largest file Send may carry (the platform's
	// upload limit for a bot: Telegram 50 MB, Discord 10 MB). The host
	// refuses a bigger one before sending (claude's send_file gets the
	// error) and tells claude the limit. Zero means unknown: the host's
	// default, 50 MB.
	MaxFileBytes int64
	// VoiceNoteFormat is the MIME type of the audio the platform shows as a
	// voice note (VoiceNoteOggOpus for Telegram and WhatsApp); a media of
	// kind MediaVoice in that format is sent as one. Empty: the platform has
	// no voice notes of its own, and a plugin that speaks a reply sends an
	// audio file instead (hook.SendingRequest.VoiceNoteFormat tells it).
	VoiceNoteFormat string
	// TypingLifetime is how long the platform shows the typing indicator
	// after one SetTyping (Telegram 5 s, Discord 10 s): the host sends the
	// next one before it lapses, for the whole turn. Zero means unknown:
	// the host assumes DefaultTypingLifetime.
	TypingLifetime time.Duration
	// TypingLapses: the platform's typing indicator lapses by itself and
	// cannot be cleared, so SetTyping with On false does nothing; the host
	// then does not send it (one call less per turn). False: the host
	// clears the indicator when a turn ends.
	TypingLapses bool
	// IDForms are the ways an operator may write a sender or chat id of
	// this channel in the host's config (owners, allow_from, members,
	// groups, agent chats), each with the canonical form the channel
	// reports in Sender.ID and InboundMessage.ChatID. The host rewrites an
	// id matching a form to the form's canonical id (the first form that
	// matches wins) and warns about an id matching none, with the hints.
	// Nil: ids are kept as written. Unlike the limits above, the forms and
	// DirectToSender must not depend on the configuration: the host reads
	// them before Configure (at `clawhost validate`), so Capabilities must
	// be callable on an unconfigured channel.
	IDForms []IDForm
	// DirectToSender: a Send whose ChatID is a sender's id (Sender.ID)
	// reaches that sender privately (Telegram's private chats, WhatsApp's,
	// the web chat's browser ids). The host then may put a private
	// question there — an approval asked of an owner.
	// Without it (Discord, whose direct channels have ids of their own) a
	// question is asked in the conversation it arose in.
	DirectToSender bool
}

// IDForm is one way to write an id of a channel (Capabilities.IDForms).
type IDForm struct {
	// Pattern is an RE2 expression matched against the whole id (the host
	// anchors it: "^(?:" + Pattern + ")$"), after surrounding spaces are
	// trimmed.
	Pattern string
	// Canonical is a regexp.Expand template over Pattern's groups ("$1",
	// "${id}") giving the id as the channel reports it. Empty: the id as
	// written.
	Canonical string
	// Hint says in words what the form is ("a numeric user id such as
	// 123456789, or -100… for a group"); shown when an id matches no form.
	Hint string
}

// VoiceNoteOggOpus is the voice-note format of most messengers: Opus audio
// in an Ogg container (Capabilities.VoiceNoteFormat).
const VoiceNoteOggOpus = "audio/ogg"

// DefaultTypingLifetime is the typing indicator's lifetime the host
// assumes for a channel that declares none (Telegram's, the shortest).
const DefaultTypingLifetime = 5 * time.Second

// LengthUnit is how a text length is counted (Capabilities.LengthUnit,
// TextLen).
type LengthUnit string

// Length units.
const (
	// LengthUTF16 counts UTF-16 code units, as JavaScript's String.length.
	LengthUTF16 LengthUnit = "utf16"
	// LengthRunes counts Unicode code points.
	LengthRunes LengthUnit = "runes"
	// LengthBytes counts UTF-8 bytes.
	LengthBytes LengthUnit = "bytes"
)

// Markup is the kind of markup a channel shows (Capabilities.Markup). It
// names a kind, not a platform: the markup module renders markdown in each.
type Markup string

// Markup kinds.
const (
	// MarkupNone: the channel shows text as it is; the host sends plain
	// text.
	MarkupNone Markup = "none"
	// MarkupMarkdown: the channel shows markdown (Discord, a browser that
	// renders it); tables become code blocks.
	MarkupMarkdown Markup = "markdown"
	// MarkupHTMLSubset: the channel shows a small HTML subset (b, i, s,
	// code, pre, a, blockquote: Telegram's parse_mode HTML); the length
	// limit counts the visible text, not the tags.
	MarkupHTMLSubset Markup = "html-subset"
	// MarkupRichHTML: the channel shows HTML with block elements (strong,
	// em, del, code, pre with its language, a, blockquote nested, p, br,
	// ul/ol/li, h1–h6, hr: Matrix's formatted_body) and sends its visible
	// text beside it as the plain fallback (Matrix's body); the length
	// limit counts both, as written.
	MarkupRichHTML Markup = "rich-html"
	// MarkupLightweight: the channel shows lightweight marks (*bold*
	// _italic_ ~strike~ ```code```, as WhatsApp does).
	MarkupLightweight Markup = "lightweight"
	// MarkupMrkdwn: the channel shows Slack's mrkdwn (*bold* _italic_
	// ~strike~ `code`, ``` blocks, > quotes, <url|label> links; &, < and >
	// written as entities, which count toward the limit as written).
	MarkupMrkdwn Markup = "mrkdwn"
)

// ParseMarkup reads a markup kind as a plugin declared it on the wire.
// The names of sdks before Markup existed are read as their kind
// ("telegram_html" is MarkupHTMLSubset, "whatsapp" MarkupLightweight,
// "discord" and "commonmark" MarkupMarkdown); "" and unknown names are
// MarkupNone, so the host sends plain text it knows shows.
func ParseMarkup(s string) Markup {
	switch s {
	case string(MarkupMarkdown), "commonmark", "discord":
		return MarkupMarkdown
	case string(MarkupHTMLSubset), "telegram_html":
		return MarkupHTMLSubset
	case string(MarkupRichHTML):
		return MarkupRichHTML
	case string(MarkupLightweight), "whatsapp":
		return MarkupLightweight
	case string(MarkupMrkdwn):
		return MarkupMrkdwn
	}
	return MarkupNone
}

// ParseLengthUnit reads a length unit from the wire: "" and unknown names
// are LengthUTF16.
func ParseLengthUnit(s string) LengthUnit {
	switch u := LengthUnit(s); u {
	case LengthRunes, LengthBytes:
		return u
	}
	return LengthUTF16
}
