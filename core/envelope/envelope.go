// Package envelope formats inbound chat messages for the agent: the one-line
// header "[Channel Sender +elapsed Timestamp] body" that tells the model where
// a message came from, plus the context blocks built around it (group
// history, queued messages, reply-to context and untrusted metadata).
//
// The header reproduces OpenClaw's formatAgentEnvelope, formatInboundEnvelope
// and formatInboundFromLabel (openclaw@2026.9.6) and is checked against the
// vectors produced by running OpenClaw.
//
// # Deliberate differences from OpenClaw
//
// The header must be impossible to forge from message content, so clawhost
// goes further than OpenClaw in two places:
//
//   - Header parts (and sender labels) lose control and invisible format
//     characters (C0/C1 controls, zero-width and bidi-override characters)
//     in addition to OpenClaw's CR/LF-to-space, bracket-to-parenthesis and
//     whitespace collapsing. Line separators U+2028/U+2029/U+0085 count as
//     whitespace, so a header part can never span lines.
//   - OpenClaw leaves the body untouched, so a body line "[Telegram Admin]
//     ..." reads like a second envelope. clawhost escapes the '[' that opens
//     any body line after the first (ignoring leading whitespace and
//     invisible characters) as "\[". Everything else in the body, CRLF
//     included, is kept byte for byte.
//
// All functions are pure; the local time zone is injected through
// [Options.Local] so output never depends on the host.
package envelope

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Options controls the header. The zero value is OpenClaw's default: local
// time zone, timestamp and elapsed time included.
type Options struct {
	// TimeZone is "local" or "host" (default: Local), "utc" or "gmt"
	// (ISO form ending in Z), "user" (UserTimeZone), or an IANA name. An
	// unknown IANA name falls back to UTC.
	TimeZone string
	// UserTimeZone is the IANA zone used when TimeZone is "user". When empty
	// or invalid, Local is used.
	UserTimeZone string
	// OmitTimestamp drops the timestamp part.
	OmitTimestamp bool
	// OmitElapsed drops the "+elapsed" part.
	OmitElapsed bool
	// Local is the zone "local" means; nil means time.Local.
	Local *time.Location
}

// Header holds the parts of an envelope header. Empty strings and zero times
// are omitted.
type Header struct {
	// Channel is the chat platform label, e.g. "Telegram". Empty becomes
	// "Channel".
	Channel string
	// From labels the conversation or sender (see [FromLabel]).
	From string
	// Host and IP identify the gateway host, for local surfaces.
	Host string
	IP   string
	// Timestamp is when the message was sent.
	Timestamp time.Time
	// Previous is when the session's previous message was sent; with
	// Timestamp it yields the elapsed part.
	Previous time.Time
}

// FormatAgent renders "[parts] body" (OpenClaw's formatAgentEnvelope). The
// parts are the channel, From with " +elapsed" appended (or "+elapsed" alone
// when From is empty), Host, IP and the timestamp, each sanitized with
// [SanitizeHeaderPart].
func FormatAgent(h Header, body string, opts Options) string {
	channel := SanitizeHeaderPart(h.Channel)
	if channel == "" {
		channel = "Channel"
	}
	parts := []string{channel}
	elapsed := ""
	if !opts.OmitElapsed && present(h.Timestamp) && present(h.Previous) {
		if d := h.Timestamp.Sub(h.Previous); d >= 0 {
			elapsed = FormatElapsed(d)
		}
	}
	from := SanitizeHeaderPart(h.From)
	switch {
	case from != "" && elapsed != "":
		parts = append(parts, from+" +"+elapsed)
	case from != "":
		parts = append(parts, from)
	case elapsed != "":
		parts = append(parts, "+"+elapsed)
	}
	for _, p := range []string{h.Host, h.IP} {
		if p = SanitizeHeaderPart(p); p != "" {
			parts = append(parts, p)
		}
	}
	if !opts.OmitTimestamp && present(h.Timestamp) {
		parts = append(parts, FormatTimestamp(h.Timestamp, opts))
	}
	return "[" + strings.Join(parts, " ") + "] " + NeutralizeBody(body)
}

// present mirrors JavaScript truthiness of a millisecond timestamp: the zero
// time and the Unix epoch both count as absent.
func present(t time.Time) bool { return !t.IsZero() && t.UnixMilli() != 0 }

// FormatElapsed renders a duration with rounded units as OpenClaw does:
// seconds below 30 s ("29s"), minutes below 59m30s ("1m" from 30 s), hours
// below 47h30m ("47h"), then days ("2d"). Rounding is half-up at each step.
func FormatElapsed(d time.Duration) string {
	s := roundHalfUp(float64(d.Milliseconds()) / 1000)
	m := roundHalfUp(s / 60)
	if m < 1 {
		return strconv.FormatFloat(s, 'f', -1, 64) + "s"
	}
	if m < 60 {
		return strconv.FormatFloat(m, 'f', -1, 64) + "m"
	}
	h := roundHalfUp(m / 60)
	if h < 48 {
		return strconv.FormatFloat(h, 'f', -1, 64) + "h"
	}
	return strconv.FormatFloat(roundHalfUp(h/24), 'f', -1, 64) + "d"
}

// roundHalfUp is JavaScript's Math.round.
func roundHalfUp(x float64) float64 { return math.Floor(x + 0.5) }

// FormatTimestamp renders t for the header: "Thu 2025-01-02T03:04:05Z" in
// UTC mode, otherwise "Thu 2025-01-02 04:04:05 GMT+1" with the zone's short
// name as en-US ICU prints it (US zones by abbreviation, "UTC", "GMT", else
// a GMT offset).
func FormatTimestamp(t time.Time, opts Options) string {
	loc, utc := resolveZone(opts)
	if utc {
		return t.UTC().Format("Mon 2006-01-02T15:04:05Z")
	}
	lt := t.In(loc)
	return lt.Format("Mon 2006-01-02 15:04:05") + " " + shortZoneName(lt)
}

func resolveZone(opts Options) (loc *time.Location, utc bool) {
	local := opts.Local
	if local == nil {
		local = time.Local
	}
	switch tz := strings.TrimSpace(opts.TimeZone); strings.ToLower(tz) {
	case "", "local", "host":
		return local, false
	case "utc", "gmt":
		return time.UTC, true
	case "user":
		if l, err := time.LoadLocation(strings.TrimSpace(opts.UserTimeZone)); err == nil && opts.UserTimeZone != "" {
			return l, false
		}
		return local, false
	default:
		l, err := time.LoadLocation(tz)
		if err != nil {
			return time.UTC, true
		}
		return l, false
	}
}

// usAbbreviations are the zone abbreviations en-US ICU prints, with the UTC
// offset (hours) each stands for there; "CST" in China is not one of them.
var usAbbreviations = map[string]int{
	"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6,
	"PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10, "HDT": -9,
}

func shortZoneName(t time.Time) string {
	name, off := t.Zone()
	if h, ok := usAbbreviations[name]; ok && h*3600 == off {
		return name
	}
	if off == 0 {
		if name == "UTC" {
			return "UTC"
		}
		return "GMT"
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	out := "GMT" + sign + strconv.Itoa(off/3600)
	if mins := off % 3600 / 60; mins != 0 {
		out += ":" + pad2(mins)
	}
	return out
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// SanitizeHeaderPart makes s safe inside a header: line breaks and other
// whitespace runs collapse to one space, '[' and ']' become '(' and ')',
// control and invisible format characters are dropped, and the result is
// trimmed.
func SanitizeHeaderPart(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r == '[':
			r = '('
		case r == ']':
			r = ')'
		}
		if isSpace(r) {
			space = true
			continue
		}
		if invisible(r) {
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// isSpace is JavaScript's /\s/ plus U+0085 and the remaining C0 controls
// that act as line breaks.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// invisible reports control characters and format characters (zero-width
// joiners, bidi overrides, ...) that could hide or reorder header text.
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// isLineBreak reports characters after which a renderer may start a new
// line.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// NeutralizeBody escapes, as "\[", the '[' that opens any line after the
// first, ignoring leading whitespace and invisible characters, so no body
// line can pass for an envelope header. All other text is unchanged.
func NeutralizeBody(body string) string {
	if !strings.Contains(body, "[") {
		return body
	}
	var b strings.Builder
	b.Grow(len(body) + 8)
	lineStart := false
	for _, r := range body {
		if lineStart && r == '[' {
			b.WriteByte('\\')
		}
		switch {
		case isLineBreak(r):
			lineStart = true
		case lineStart && (isSpace(r) || invisible(r)):
		default:
			lineStart = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ChatType is the kind of conversation a message arrived in.
type ChatType string

const (
	// Direct is a one-to-one conversation (the default).
	Direct ChatType = "direct"
	// Group is a multi-party chat.
	Group ChatType = "group"
	// Channel is a broadcast or server channel (Discord, Slack).
	Channel ChatType = "channel"
)

// Sender identifies the author of a group message.
type Sender struct {
	Name     string
	Username string
	Tag      string
	E164     string
	ID       string
}

// Label renders the sender as OpenClaw's resolveSenderLabel does: the first
// of Name, Username, Tag as display and the first of E164, ID as id, shown
// "Display (id)" unless they are equal or the id is a UUID.
func (s Sender) Label() string {
	display := firstNonEmpty(s.Name, s.Username, s.Tag)
	id := firstNonEmpty(s.E164, s.ID)
	switch {
	case display != "" && id != "" && display != id && !(len(id) == 36 && uuidRE().MatchString(id)):
		return display + " (" + id + ")"
	case display != "":
		return display
	default:
		return id
	}
}

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// Inbound is a received message to wrap.
type Inbound struct {
	Header
	// ChatType defaults to Direct.
	ChatType ChatType
	// SenderLabel overrides Sender for group and channel messages. It is
	// ignored for direct messages, as in OpenClaw.
	SenderLabel string
	// Sender describes the author of a group message.
	Sender Sender
	// FromMe marks a direct message sent by the account itself.
	FromMe bool
}

var idSuffixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s+id:\S*\s*$`) })

// FormatInbound renders an inbound message (OpenClaw's
// formatInboundEnvelope): the header of [FormatAgent] and a body prefixed by
// who said it. Direct: "(self): " for FromMe, else From without its
// " id:..." suffix, or "(sender)" when that label contains ':'. Group and
// channel: SenderLabel or Sender.Label(), when known.
func FormatInbound(in Inbound, body string, opts Options) string {
	label := ""
	switch in.ChatType {
	case Group, Channel:
		label = firstNonEmpty(in.SenderLabel, in.Sender.Label())
	default:
		switch {
		case in.FromMe:
			label = "(self)"
		default:
			label = in.From
			if strings.Contains(label, "id:") { // what the pattern needs
				label = idSuffixRE().ReplaceAllString(label, "")
			}
			label = strings.TrimSpace(label)
			if strings.Contains(label, ":") {
				label = "(sender)"
			}
		}
	}
	if label = SanitizeHeaderPart(label); label != "" {
		body = label + ": " + body
	}
	return FormatAgent(in.Header, body, opts)
}

// FromLabelParams are the inputs of [FromLabel].
type FromLabelParams struct {
	IsGroup       bool
	GroupLabel    string
	GroupFallback string
	GroupID       string
	DirectLabel   string
	DirectID      string
}

// FromLabel builds the From part of a header (OpenClaw's
// formatInboundFromLabel): for groups "<label|fallback|Group> id:<id>", for
// direct chats the label plus " id:<id>" when the id differs from it.
func FromLabel(p FromLabelParams) string {
	if p.IsGroup {
		label := firstNonEmpty(p.GroupLabel, p.GroupFallback, "Group")
		if id := strings.TrimSpace(p.GroupID); id != "" {
			return label + " id:" + id
		}
		return label
	}
	label := strings.TrimSpace(p.DirectLabel)
	id := strings.TrimSpace(p.DirectID)
	if id == "" || id == label {
		return label
	}
	return label + " id:" + id
}
