package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Defaults of the messages block.
const (
	DefaultTextLimit         = 4000
	DefaultChunkMode         = "length"
	DefaultGroupHistoryLimit = 50
	DefaultTimezone          = "local"
	DefaultStreaming         = "auto"
	DefaultHookTimeout       = Duration("5s")
	DefaultTurnCard          = "auto"
	DefaultPingAfter         = Duration("30s")
	DefaultSeenReaction      = "👀"
)

// ChunkModes are the values messages.chunk_mode accepts; StreamingModes
// those of messages.streaming.
var (
	ChunkModes     = []string{"length", "newline"}
	StreamingModes = []string{"auto", "blocks", "draft", "off"}
	TurnCardModes  = []string{"auto", "off"}
)

// Messages is the messages {} block: how prompts are built from inbound
// messages and how replies are sent back.
type Messages struct {
	// ResponsePrefix is put before every reply (response_prefix). It may
	// contain templates such as {model}, filled in per reply. Default ""
	// (none).
	ResponsePrefix string `hcl:"response_prefix,optional"`

	// TextLimit is the longest reply chunk, in characters (text_limit); a
	// longer reply is split. The host uses the smaller of this and the
	// channel's own limit. At least 1. Default 4000. A plugin's text_limit
	// overrides it for that instance.
	TextLimit int `hcl:"text_limit,optional"`

	// ChunkMode decides where a long reply is split (chunk_mode): "length"
	// — as late as the limit allows, at a line break or space where there is
	// one; "newline" — only between paragraphs (at blank lines), packing as
	// many paragraphs as fit, and by length only inside a paragraph longer
	// than the limit. Code blocks are never broken unbalanced. Default
	// "length".
	ChunkMode string `hcl:"chunk_mode,optional"`

	// GroupHistoryLimit is how many recent group messages not addressed to
	// the agent are kept and given to it as context with the next message
	// that is (group_history_limit). 0 disables the history. Default 50.
	GroupHistoryLimit int `hcl:"group_history_limit,optional"`

	// Timezone is the time zone of the timestamps in message envelopes
	// (timezone): "local" — the host's; "utc"; or an IANA name such as
	// "Europe/Berlin". Default "local". Location returns it.
	Timezone string `hcl:"timezone,optional"`

	// Streaming decides how a reply reaches the chat while it is written
	// (streaming): "auto" — a live draft where the channel can edit
	// messages, else "blocks"; "blocks" — each finished block (paragraph,
	// code block) is sent as it completes (800 to 1200 characters, or what
	// there is after a pause of a second); "draft" — one message, shown
	// 0.15 s after the reply's first streamed words (a reply done sooner
	// is just sent) and edited at most once a second as it grows (channels
	// that cannot edit get "blocks"); "off" — the whole reply once the
	// turn ends. Default "auto". While a message_sending hook is enabled
	// every setting acts as "off": the chat is shown nothing the hooks
	// have not seen (docs/hooks.md).
	Streaming string `hcl:"streaming,optional"`

	// Verbose shows the agent's tool use as progress lines in the chat
	// (verbose). Default false.
	Verbose bool `hcl:"verbose,optional"`

	// HookTimeout bounds each hook plugin's answer (hook_timeout): a
	// before_agent_start or message_sending hook that takes longer is
	// skipped, a message_received hook fails (its on_error decides) and an
	// agent_end call is tried again later. Default "5s".
	HookTimeout Duration `hcl:"hook_timeout,optional"`

	// PromptSection adds the messaging section to claude's system prompt
	// (prompt_section): the channel and kind of chat, what it renders,
	// NO_REPLY, reply tags, sending files, today's date and zone, where
	// earlier sessions' notes are (core/chatprompt). Default true.
	PromptSection bool `hcl:"prompt_section,optional"`

	// PromptTemplate replaces the section's text with a Go text/template
	// file (prompt_template) over chatprompt.Chat (.Channel, .Type,
	// .Title, .Markdown, .MaxText, .Date, .Zone, ...; the default is
	// core/chatprompt/section.tmpl), resolved against the config file's
	// directory. Default "" (the built-in text).
	PromptTemplate string `hcl:"prompt_template,optional"`

	// TurnCard shows a running turn as one live message on channels that
	// edit messages (turn_card): what claude is doing now (the current
	// tool step), how long it has run, how many messages wait behind it,
	// and a Stop button; the card becomes the answer's draft when the
	// answer streams, and the answer when it is done. "auto" — where the
	// channel can edit and streaming is "auto", "draft" or "off"; "off" —
	// never. Default "auto".
	TurnCard string `hcl:"turn_card,optional"`

	// PingAfter: when a turn ran longer than this and its answer reached
	// the chat only by editing a message already there (the card or the
	// draft — an edit does not notify a phone), one short new message
	// says it is done (ping_after). "0s" turns it off. Default "30s".
	PingAfter Duration `hcl:"ping_after,optional"`

	// SeenReaction is the reaction a message gets when it arrives while a
	// turn of its chat runs (queued behind it, or steered or collected
	// into it), on channels with reactions (seen_reaction): the sender
	// sees it was taken. "" turns it off. Default "👀".
	SeenReaction string `hcl:"seen_reaction,optional"`

	// QueuedNotice sends a short notice ("Queued: 2 ahead.") for such a
	// message where the channel has no reactions or seen_reaction is ""
	// (queued_notice). Default false.
	QueuedNotice bool `hcl:"queued_notice,optional"`
}

func defaultMessages() *Messages {
	return &Messages{
		TextLimit:         DefaultTextLimit,
		ChunkMode:         DefaultChunkMode,
		GroupHistoryLimit: DefaultGroupHistoryLimit,
		Timezone:          DefaultTimezone,
		Streaming:         DefaultStreaming,
		HookTimeout:       DefaultHookTimeout,
		PromptSection:     true,
		TurnCard:          DefaultTurnCard,
		PingAfter:         DefaultPingAfter,
		SeenReaction:      DefaultSeenReaction,
	}
}

// Location returns the time zone of Timezone: time.Local for "local",
// time.UTC for "utc", else the IANA zone (time.Local when it cannot be
// loaded, which Load has already refused).
func (m *Messages) Location() *time.Location {
	switch m.Timezone {
	case "local", "":
		return time.Local
	case "utc":
		return time.UTC
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return time.Local
	}
	return loc
}

func (m *Messages) check(k *checker) {
	k.atLeast("text_limit", m.TextLimit, 1)
	k.enum("chunk_mode", m.ChunkMode, ChunkModes)
	k.atLeast("group_history_limit", m.GroupHistoryLimit, 0)
	k.timezone("timezone", m.Timezone)
	k.enum("streaming", m.Streaming, StreamingModes)
	k.duration("hook_timeout", m.HookTimeout)
	k.enum("turn_card", m.TurnCard, TurnCardModes)
	k.optionalDuration("ping_after", m.PingAfter)
	if r := []rune(m.SeenReaction); len(r) > 8 || strings.ContainsFunc(m.SeenReaction, unicode.IsSpace) {
		k.errorf(k.valueRange("seen_reaction"), "Invalid value for "+k.qualified("seen_reaction"),
			"%q is not one emoji; write one such as \"👀\", or \"\" to turn the reaction off.", m.SeenReaction)
	}
	if m.PromptTemplate != "" {
		if _, err := os.Stat(m.PromptTemplate); err != nil {
			k.errorf(k.valueRange("prompt_template"), "Unreadable messages.prompt_template", "%v", err)
		}
	}
}

// timezone checks a time zone setting: "local", "utc" or an IANA name.
func (k *checker) timezone(name, tz string) {
	if tz == "local" || tz == "utc" {
		return
	}
	if tz != "" && !strings.ContainsFunc(tz, unicode.IsSpace) {
		if _, err := time.LoadLocation(tz); err == nil {
			return
		}
	}
	k.errorf(k.valueRange(name), "Invalid value for "+k.qualified(name),
		"%q is not a time zone: write \"local\", \"utc\" or an IANA time zone name such as \"Europe/Berlin\".%s",
		tz, suggestTimezone(tz))
}

// suggestTimezone is " Did you mean \"x\"?" for a near miss of "local",
// "utc" or a zone name of the system's time zone database, else "".
func suggestTimezone(tz string) string {
	candidates := append([]string{"local", "utc"}, zoneNames()...)
	for _, c := range candidates {
		if strings.EqualFold(c, tz) {
			return fmt.Sprintf(" Did you mean %q?", c)
		}
	}
	return didYouMean(tz, candidates)
}

// zoneNames lists the zone names of the first time zone database directory
// found (the ones the time package reads), for suggestions; none when there
// is none.
var zoneNames = sync.OnceValue(func() []string {
	dirs := []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"}
	if z := os.Getenv("ZONEINFO"); z != "" {
		dirs = append([]string{z}, dirs...)
	}
	for _, dir := range dirs {
		var names []string
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, rerr := filepath.Rel(dir, path)
			if rerr != nil || rel == "." {
				return nil
			}
			base := d.Name()
			// Zone names start upper-case ("Europe/Berlin", "UTC");
			// data files ("zone.tab", "posixrules") and the
			// "posix/" and "right/" copies do not count.
			if base[0] < 'A' || base[0] > 'Z' || strings.Contains(base, ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() {
				names = append(names, filepath.ToSlash(rel))
			}
			return nil
		})
		if len(names) > 0 {
			return names
		}
	}
	return nil
})
