// Package message is the core's normalized inbound message: what a channel
// delivered, repaired (valid UTF-8, no control characters, a known chat
// type), plus where a reply to it goes. It is also the journal's payload:
// every accepted message is stored encoded by [Encode] and read back by
// [Decode], so a restart resumes with exactly what arrived. The payload is
// versioned ([Version]); Decode reads every version written so far.
package message

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

// Version is the journal payload version Encode writes. Version 0 (no
// "v" field) is the same shape written before the field existed.
const Version = 1

// Message is the core's normalized inbound message (the seeds' simplified
// MsgContext).
type Message struct {
	// V is the payload version; Encode sets it.
	V int `json:"v,omitempty"`
	// Instance is the plugin instance the message came through; Channel is
	// its source ("telegram"), used as the envelope's channel label.
	Instance string `json:"instance"`
	Channel  string `json:"channel,omitempty"`
	// ChatType is direct, group or channel.
	ChatType channel.ChatType `json:"chat_type"`
	ChatID   string           `json:"chat_id"`
	ThreadID string           `json:"thread_id,omitempty"`
	// MessageID is the platform's id of the message.
	MessageID string `json:"message_id,omitempty"`
	// From is the sender in allow_from form, "<instance>:<sender id>"; To
	// is the chat, "<instance>:<chat id>".
	From   string         `json:"from"`
	To     string         `json:"to"`
	Sender channel.Sender `json:"sender"`
	// Body is the text (a media caption when there is no text);
	// CommandBody is the body with the bot's own mention removed.
	Body        string `json:"body"`
	CommandBody string `json:"command_body,omitempty"`
	// WasMentioned: the bot was mentioned or replied to.
	WasMentioned bool             `json:"was_mentioned,omitempty"`
	ReplyTo      *channel.ReplyTo `json:"reply_to,omitempty"`
	Media        []Media          `json:"media,omitempty"`
	// Timestamp is the platform's time of the message; ReceivedAt when the
	// host got it.
	Timestamp  time.Time `json:"timestamp"`
	ReceivedAt time.Time `json:"received_at"`
	ChatTitle  string    `json:"chat_title,omitempty"`
	// OversizeBytes is set when the message was too large for the plugin
	// protocol: this is a stub (no body, reply or media), the sender is told
	// and the agent never sees it.
	OversizeBytes int64 `json:"oversize_bytes,omitempty"`
	// Scheduled names the schedule that started this message (a schedule
	// block or the heartbeat): nobody typed it, the configuration did, so
	// access control does not apply.
	Scheduled string `json:"scheduled,omitempty"`
	// Model, on a scheduled message, is the model its turn runs on
	// (heartbeat { model }); "" for the session's.
	Model string `json:"model,omitempty"`
	// Action is set when the message is a press of a button the host sent
	// (Body is the button's label). A press of a question's button answers
	// it; any other press stands for its button id typed as text (a
	// command plugin's picker: "/mode plan").
	Action *channel.Action `json:"action,omitempty"`
	// Forward is set when Body was forwarded from another message: the
	// sender shows it but did not write it (untrusted in the prompt, never
	// a command).
	Forward *channel.Forward `json:"forward,omitempty"`
	// ThreadContext is what the message's thread hangs from (the parent
	// post, then the thread's earlier messages), as the channel attached
	// it; the first turn of the thread's session shows it as context.
	ThreadContext []channel.ReplyTo `json:"thread_context,omitempty"`
	// Received records that the message_received hooks were asked and
	// what they decided (Body, CommandBody and Media already hold their
	// rewrite and notes); nil: not asked yet. It is journaled before the
	// decision is acted on, so a restart never asks them again.
	Received *Received `json:"received,omitempty"`
}

// Received is the recorded outcome of the message_received hooks.
type Received struct {
	// Hooks are the instances that answered, in order.
	Hooks []string `json:"hooks,omitempty"`
	// Dropped: a hook dropped the message (or failed with on_error
	// "drop"); Reason is what the sender is told.
	Dropped bool   `json:"dropped,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Steps are the hooks' own lines of what they did and how long it took
	// (hook.ReceivedResponse.Step), in order: the turn card shows them.
	Steps []string `json:"steps,omitempty"`
}

// Media is an inbound attachment. Path is set once the host downloaded it
// into the workspace.
type Media struct {
	Kind     channel.MediaKind `json:"kind"`
	Ref      string            `json:"ref"`
	Path     string            `json:"path,omitempty"`
	MIME     string            `json:"mime,omitempty"`
	Size     int64             `json:"size,omitempty"`
	Filename string            `json:"filename,omitempty"`
	Caption  string            `json:"caption,omitempty"`
}

// IsGroup reports whether the message is from a group or channel chat.
func (m *Message) IsGroup() bool {
	return m.ChatType == channel.ChatGroup || m.ChatType == channel.ChatChannel
}

// Command returns the text commands are parsed from; "" for a forwarded
// message: its text is someone else's, not the sender's command.
func (m *Message) Command() string {
	if m.Forward != nil {
		return ""
	}
	if m.CommandBody != "" {
		return strings.TrimSpace(m.CommandBody)
	}
	return strings.TrimSpace(m.Body)
}

// Normalize turns a channel's message into a Message. Bad input is repaired,
// never refused: invalid UTF-8 becomes U+FFFD, control characters other
// than newline and tab are removed, an unknown chat type is treated as
// direct (the most restrictive access rules apply to it) and reported in
// problems for the log.
func Normalize(instance, source string, in channel.InboundMessage, now time.Time) (m Message, problems []string) {
	m = Message{
		Instance: instance, Channel: source, ChatType: in.ChatType,
		ChatID: cleanID(in.ChatID), ThreadID: cleanID(in.ThreadID), MessageID: cleanID(in.MessageID),
		Sender:        channel.Sender{ID: cleanID(in.Sender.ID), Name: cleanText(in.Sender.Name), Username: cleanText(in.Sender.Username), IsBot: in.Sender.IsBot, AltIDs: cleanIDs(in.Sender.AltIDs)},
		Body:          cleanText(in.Text),
		CommandBody:   cleanText(in.CommandText),
		WasMentioned:  in.WasMentioned,
		Timestamp:     in.Timestamp,
		ReceivedAt:    now,
		ChatTitle:     cleanText(in.ChatTitle),
		OversizeBytes: in.OversizeBytes,
	}
	if a := in.Action; a != nil {
		m.Action = &channel.Action{ButtonID: cleanText(a.ButtonID), MessageID: cleanID(a.MessageID)}
	}
	if f := in.Forward; f != nil {
		m.Forward = &channel.Forward{From: cleanText(f.From), Date: f.Date}
	}
	if !utf8.ValidString(in.Text) {
		problems = append(problems, "invalid UTF-8 in the text was replaced")
	}
	switch m.ChatType {
	case channel.ChatDirect, channel.ChatGroup, channel.ChatChannel:
	case "":
		m.ChatType = channel.ChatDirect
	default:
		problems = append(problems, "unknown chat type "+strconvQuote(string(in.ChatType))+" treated as direct")
		m.ChatType = channel.ChatDirect
	}
	if m.ChatID == "" && m.ChatType == channel.ChatDirect {
		m.ChatID = m.Sender.ID
	}
	if m.Timestamp.IsZero() || m.Timestamp.After(now.Add(time.Minute)) {
		m.Timestamp = now
	}
	if in.ReplyTo != nil {
		r := *in.ReplyTo
		r.Text, r.SenderName, r.MessageID, r.SenderID = cleanText(r.Text), cleanText(r.SenderName), cleanID(r.MessageID), cleanID(r.SenderID)
		m.ReplyTo = &r
		if r.ToBot {
			m.WasMentioned = true
		}
	}
	for _, r := range in.ThreadContext {
		r.Text, r.SenderName, r.MessageID, r.SenderID = cleanText(r.Text), cleanText(r.SenderName), cleanID(r.MessageID), cleanID(r.SenderID)
		if strings.TrimSpace(r.Text) != "" {
			m.ThreadContext = append(m.ThreadContext, r)
		}
	}
	for _, md := range in.Media {
		m.Media = append(m.Media, Media{Kind: md.Kind, Ref: md.Ref, MIME: md.MIME, Size: md.Size, Filename: cleanText(md.Filename), Caption: cleanText(md.Caption)})
	}
	m.From = instance + ":" + m.Sender.ID
	m.To = instance + ":" + m.ChatID
	return m, problems
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cleanText makes text valid UTF-8 and drops control characters except
// newline and tab (carriage returns are dropped too, so "\r\n" is "\n").
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
}

// cleanID is cleanText for identifiers: no whitespace either.
func cleanID(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// cleanIDs cleans each id and drops the empty ones; nil when none is left.
func cleanIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id = cleanID(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// SenderIDs returns the sender's id and its alternate ids
// (channel.Sender.AltIDs), the forms an access list entry may use.
func (m *Message) SenderIDs() []string {
	if len(m.Sender.AltIDs) == 0 {
		return []string{m.Sender.ID}
	}
	return append([]string{m.Sender.ID}, m.Sender.AltIDs...)
}

// Encode returns the journal payload of m.
func Encode(m *Message) []byte {
	c := *m
	c.V = Version
	b, _ := json.Marshal(&c) // a Message always marshals
	return b
}

// Decode reads a journal payload of any version up to [Version].
func Decode(b []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, fmt.Errorf("decode journal message: %w", err)
	}
	if m.V > Version {
		return Message{}, fmt.Errorf("decode journal message: version %d is newer than this clawhost (%d)", m.V, Version)
	}
	return m, nil
}

// Target is where a reply goes: a chat (and thread) of an instance.
type Target struct {
	Instance, ChatID, ThreadID string
}

// Target returns where a reply to m goes.
func (m *Message) Target() Target { return Target{m.Instance, m.ChatID, m.ThreadID} }

// Conversation describes m's chat to command and hook plugins.
func (m *Message) Conversation(sessionKey string) command.Conversation {
	return command.Conversation{SessionKey: sessionKey, Instance: m.Instance, Channel: m.Channel, ChatType: m.ChatType, ChatID: m.ChatID, ThreadID: m.ThreadID}
}
