package whatsapp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/clawhost/clawhost/sdk/channel"
)

// identity is who the plugin is on WhatsApp: the account's phone number
// and its LID, both without a device part. Either may be empty until
// WhatsApp told it.
type identity struct {
	PN, LID types.JID
}

// is reports whether j (with or without a device part) is the account.
func (me identity) is(j types.JID) bool {
	j = j.ToNonAD()
	if j.IsEmpty() {
		return false
	}
	return (!me.PN.IsEmpty() && j == me.PN) || (!me.LID.IsEmpty() && j == me.LID)
}

// isString is is for a JID written as text (ContextInfo fields).
func (me identity) isString(s string) bool {
	j, err := types.ParseJID(s)
	return err == nil && me.is(j)
}

// inbound turns whatsmeow's message events into the host's messages. It is
// a value computed for each event; nothing in it talks to WhatsApp.
type inbound struct {
	me           identity
	selfChat     bool
	onlySelfChat bool
	// cutoff: messages sent before it are a backlog and not delivered.
	cutoff time.Time
	// sent reports whether the plugin sent the message id.
	sent func(id string) bool
	// alt returns the other address of a user (the phone number of a LID,
	// the LID of a phone number) from whatsmeow's LID map, EmptyJID when
	// unknown. Nil: none known.
	alt func(types.JID) types.JID
}

// Why a message is not delivered. Each is logged at debug level.
const (
	skipBroadcast = "status broadcast, broadcast list or newsletter"
	skipChat      = "chat of an unsupported kind"
	skipEmpty     = "no message content"
	skipProtocol  = "protocol message (history sync, revoke, key share)"
	skipEdit      = "edit of an earlier message"
	skipSent      = "sent by this plugin"
	skipOwn       = "the account's own message outside the self chat"
	skipNotSelf   = "only_self_chat: not the self chat"
	skipNoContent = "no text or media (sender key distribution, reaction, poll, …)"
	skipBacklog   = "backlog: older than the connection minus backlog_margin"
)

// convert returns the host's message for e, or why it is not delivered.
//
// Addressing: WhatsApp addresses a user by phone number or, since its 2025
// migration, by LID; whatsmeow gives the other form as SenderAlt when the
// message carries it and keeps a LID map. A person's id is "+<phone
// number>" whenever the number is known, with the LID ("…@lid") as
// Sender.AltIDs; the LID alone otherwise. A direct chat's id is the
// person's id; a group's is its JID ("…@g.us").
func (in inbound) convert(e *events.Message) (channel.InboundMessage, string) {
	info := e.Info
	chat := info.Chat.ToNonAD()
	switch chat.Server {
	case types.BroadcastServer, types.NewsletterServer:
		return channel.InboundMessage{}, skipBroadcast
	case types.DefaultUserServer, types.HiddenUserServer, types.GroupServer:
	default:
		return channel.InboundMessage{}, skipChat
	}
	msg := e.Message
	switch {
	case msg == nil:
		return channel.InboundMessage{}, skipEmpty
	case msg.GetProtocolMessage() != nil:
		return channel.InboundMessage{}, skipProtocol
	case e.IsEdit:
		return channel.InboundMessage{}, skipEdit
	case in.sent != nil && in.sent(info.ID):
		return channel.InboundMessage{}, skipSent
	}
	group := chat.Server == types.GroupServer
	self := !group && in.me.is(chat)
	if info.IsFromMe && !(in.selfChat && self) {
		return channel.InboundMessage{}, skipOwn
	}
	if in.onlySelfChat && !self {
		return channel.InboundMessage{}, skipNotSelf
	}
	text, media := content(msg)
	if strings.TrimSpace(text) == "" && len(media) == 0 {
		return channel.InboundMessage{}, skipNoContent
	}
	if !in.cutoff.IsZero() && info.Timestamp.Before(in.cutoff) {
		return channel.InboundMessage{}, skipBacklog
	}

	senderID, senderAlts := in.person(info.Sender, info.SenderAlt)
	out := channel.InboundMessage{
		ChatType:  channel.ChatDirect,
		MessageID: info.ID,
		Sender:    channel.Sender{ID: senderID, AltIDs: senderAlts, Name: info.PushName},
		Text:      text,
		Media:     media,
		Timestamp: info.Timestamp,
	}
	switch {
	case group:
		out.ChatType, out.ChatID = channel.ChatGroup, chat.String()
	case chat == info.Sender.ToNonAD():
		out.ChatID = senderID
	default: // the self chat (or a chat addressed by the other form)
		out.ChatID, _ = in.person(chat, info.RecipientAlt)
	}
	if self {
		out.Sender.Name = nonEmpty(info.PushName, "me")
	}

	ci := contextInfo(msg)
	if ci.GetIsForwarded() {
		// WhatsApp does not say whose it was.
		out.Forward = &channel.Forward{}
	}
	if id := ci.GetStanzaID(); id != "" {
		toBot := (in.sent != nil && in.sent(id)) || (!self && in.me.isString(ci.GetParticipant()))
		r := &channel.ReplyTo{MessageID: id, ToBot: toBot}
		if q := ci.GetQuotedMessage(); q != nil {
			r.Text, _ = content(q)
		}
		if p, err := types.ParseJID(ci.GetParticipant()); err == nil && !p.IsEmpty() {
			r.SenderID, _ = in.person(p, types.EmptyJID)
		}
		out.ReplyTo = r
		out.WasMentioned = toBot
	}
	if group {
		for _, m := range ci.GetMentionedJID() {
			if in.me.isString(m) {
				out.WasMentioned = true
			}
		}
		if ct := in.stripMention(text); ct != text {
			out.CommandText = ct
		}
	}
	return out, ""
}

// person returns the id and the alternate ids of the user j, whose other
// address may be alt.
func (in inbound) person(j, alt types.JID) (string, []string) {
	j, alt = j.ToNonAD(), alt.ToNonAD()
	if in.me.is(j) && !in.me.PN.IsEmpty() {
		j, alt = in.me.PN, in.me.LID
	}
	var pn, lid types.JID
	switch j.Server {
	case types.DefaultUserServer:
		pn = j
	case types.HiddenUserServer:
		lid = j
	default:
		return j.String(), nil
	}
	switch alt.Server {
	case types.DefaultUserServer:
		if pn.IsEmpty() {
			pn = alt
		}
	case types.HiddenUserServer:
		if lid.IsEmpty() {
			lid = alt
		}
	}
	if in.alt != nil {
		if pn.IsEmpty() {
			if a := in.alt(lid).ToNonAD(); a.Server == types.DefaultUserServer {
				pn = a
			}
		} else if lid.IsEmpty() {
			if a := in.alt(pn).ToNonAD(); a.Server == types.HiddenUserServer {
				lid = a
			}
		}
	}
	if pn.IsEmpty() {
		return lid.String(), nil
	}
	if lid.IsEmpty() {
		return "+" + pn.User, nil
	}
	return "+" + pn.User, []string{lid.String()}
}

// stripMention removes "@<own number>" and "@<own LID>" from text, for
// commands written after a mention ("@bot /new"); text without them is
// returned as is.
func (in inbound) stripMention(text string) string {
	out := text
	for _, j := range []types.JID{in.me.PN, in.me.LID} {
		if j.User != "" {
			out = strings.ReplaceAll(out, "@"+j.User, "")
		}
	}
	if out == text {
		return text
	}
	for strings.Contains(out, "  ") {
		out = strings.ReplaceAll(out, "  ", " ")
	}
	return strings.TrimSpace(out)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// content returns the text of msg (a caption for media) and its media.
func content(msg *waE2E.Message) (string, []channel.Media) {
	switch {
	case msg.GetConversation() != "":
		return msg.GetConversation(), nil
	case msg.GetExtendedTextMessage() != nil:
		return msg.GetExtendedTextMessage().GetText(), nil
	case msg.GetImageMessage() != nil:
		m := msg.GetImageMessage()
		return m.GetCaption(), []channel.Media{mediaOf(channel.MediaImage, m, m.GetMimetype(), "", m.GetCaption())}
	case msg.GetVideoMessage() != nil:
		m := msg.GetVideoMessage()
		return m.GetCaption(), []channel.Media{mediaOf(channel.MediaVideo, m, m.GetMimetype(), "", m.GetCaption())}
	case msg.GetAudioMessage() != nil:
		m := msg.GetAudioMessage()
		kind := channel.MediaAudio
		if m.GetPTT() {
			kind = channel.MediaVoice
		}
		return "", []channel.Media{mediaOf(kind, m, m.GetMimetype(), "", "")}
	case msg.GetDocumentMessage() != nil:
		m := msg.GetDocumentMessage()
		name := m.GetFileName()
		if name == "" {
			name = m.GetTitle()
		}
		return m.GetCaption(), []channel.Media{mediaOf(channel.MediaDocument, m, m.GetMimetype(), name, m.GetCaption())}
	case msg.GetStickerMessage() != nil:
		m := msg.GetStickerMessage()
		return "", []channel.Media{mediaOf(channel.MediaSticker, m, m.GetMimetype(), "", "")}
	}
	return "", nil
}

// contextInfo returns the ContextInfo of whichever part msg carries (the
// quote and the mentions); nil when none.
func contextInfo(msg *waE2E.Message) *waE2E.ContextInfo {
	switch {
	case msg.GetExtendedTextMessage() != nil:
		return msg.GetExtendedTextMessage().GetContextInfo()
	case msg.GetImageMessage() != nil:
		return msg.GetImageMessage().GetContextInfo()
	case msg.GetVideoMessage() != nil:
		return msg.GetVideoMessage().GetContextInfo()
	case msg.GetAudioMessage() != nil:
		return msg.GetAudioMessage().GetContextInfo()
	case msg.GetDocumentMessage() != nil:
		return msg.GetDocumentMessage().GetContextInfo()
	case msg.GetStickerMessage() != nil:
		return msg.GetStickerMessage().GetContextInfo()
	}
	return nil
}

// mediaRef is what DownloadMedia needs to fetch and decrypt an inbound
// attachment, carried in channel.Media.Ref (base64url of its JSON, with a
// version prefix). It holds the media key: a Ref is as secret as the
// attachment, and the host keeps it in its journal only.
type mediaRef struct {
	Type       string `json:"t"` // whatsmeow.MediaType
	DirectPath string `json:"p"`
	MediaKey   []byte `json:"k"`
	EncSHA256  []byte `json:"e"`
	SHA256     []byte `json:"s"`
	Length     int64  `json:"n"`
	MIME       string `json:"m,omitempty"`
}

const refPrefix = "wa1:"

// downloadable is what the media messages have in common.
type downloadable interface {
	GetDirectPath() string
	GetMediaKey() []byte
	GetFileEncSHA256() []byte
	GetFileSHA256() []byte
	GetFileLength() uint64
}

func mediaOf(kind channel.MediaKind, m downloadable, mime, name, caption string) channel.Media {
	t := whatsmeow.MediaImage
	switch kind {
	case channel.MediaVideo:
		t = whatsmeow.MediaVideo
	case channel.MediaAudio, channel.MediaVoice:
		t = whatsmeow.MediaAudio
	case channel.MediaDocument:
		t = whatsmeow.MediaDocument
	}
	ref := mediaRef{Type: string(t), DirectPath: m.GetDirectPath(), MediaKey: m.GetMediaKey(), EncSHA256: m.GetFileEncSHA256(),
		SHA256: m.GetFileSHA256(), Length: int64(m.GetFileLength()), MIME: mime}
	b, _ := json.Marshal(ref) // plain fields always marshal
	return channel.Media{Kind: kind, Ref: refPrefix + base64.RawURLEncoding.EncodeToString(b), MIME: mime,
		Size: int64(m.GetFileLength()), Filename: name, Caption: caption}
}

// parseRef decodes a channel.Media.Ref.
func parseRef(s string) (mediaRef, error) {
	var r mediaRef
	if !strings.HasPrefix(s, refPrefix) {
		return r, errors.New("not a whatsapp media ref")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, refPrefix))
	if err != nil {
		return r, errors.New("malformed whatsapp media ref")
	}
	if err := json.Unmarshal(b, &r); err != nil || r.DirectPath == "" || len(r.MediaKey) == 0 {
		return r, errors.New("malformed whatsapp media ref")
	}
	return r, nil
}
