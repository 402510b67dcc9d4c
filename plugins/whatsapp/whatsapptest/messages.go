package whatsapptest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/protocol"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// Contact is a simulated WhatsApp user with one device (their phone) and
// real Signal sessions with the linked device.
type Contact struct {
	s *Server
	p *party
}

// ContactOptions describe a contact.
type ContactOptions struct {
	// Phone is the phone number without "+", e.g. "15550001111".
	Phone string
	// LID is the LID user part, e.g. "200000000000001".
	LID string
	// Name is the push name shown with their messages, default "Contact".
	Name string
}

// AddContact creates a contact. Phone and LID must be unique digits.
func (s *Server) AddContact(opts ContactOptions) (*Contact, error) {
	if opts.Phone == "" || opts.LID == "" {
		return nil, errors.New("whatsapptest: add contact: phone and lid are required")
	}
	if opts.Name == "" {
		opts.Name = "Contact"
	}
	s.mu.Lock()
	_, dup1 := s.contacts[opts.Phone]
	_, dup2 := s.contacts[opts.LID]
	s.mu.Unlock()
	if dup1 || dup2 || opts.Phone == s.pn.User || opts.LID == s.lid.User {
		return nil, fmt.Errorf("whatsapptest: add contact %s: already exists", opts.Phone)
	}
	s.cryptoMu.Lock()
	p, err := newParty(s.ctx, s.store, types.NewJID(opts.Phone, types.DefaultUserServer), types.NewJID(opts.LID, types.HiddenUserServer), opts.Name, nil)
	s.cryptoMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("whatsapptest: add contact: %w", err)
	}
	ct := &Contact{s: s, p: p}
	s.mu.Lock()
	s.contacts[opts.Phone] = ct
	s.contacts[opts.LID] = ct
	s.mu.Unlock()
	return ct, nil
}

// JID is the contact's phone-number JID.
func (c *Contact) JID() types.JID { return c.p.pn }

// LID is the contact's LID.
func (c *Contact) LID() types.JID { return c.p.lid }

// Name is the contact's push name.
func (c *Contact) Name() string { return c.p.name }

// TextOptions describe a text message sent to the linked device.
type TextOptions struct {
	// Text is the message text.
	Text string
	// ID is the message id; default a fresh random one.
	ID string
	// LIDAddressed sends the message as WhatsApp does after the LID
	// migration: from=<lid> with sender_pn=<phone>. Otherwise from=<phone>
	// with sender_lid=<lid>.
	LIDAddressed bool
	// QuoteID, when set, makes the message a reply to that message id,
	// sent by QuoteParticipant (a JID string form is what WhatsApp puts in
	// ContextInfo.Participant), with QuoteText as the quoted message.
	QuoteID          string
	QuoteParticipant types.JID
	QuoteText        string
	// Mentions become ContextInfo.MentionedJID.
	Mentions []types.JID
	// Time is the server timestamp, default now.
	Time time.Time
}

// Message builds the waE2E.Message for o: a Conversation, or an
// ExtendedTextMessage when it quotes or mentions.
func (o TextOptions) Message() *waE2E.Message {
	if o.QuoteID == "" && len(o.Mentions) == 0 {
		return &waE2E.Message{Conversation: proto.String(o.Text)}
	}
	ci := &waE2E.ContextInfo{}
	if o.QuoteID != "" {
		ci.StanzaID = proto.String(o.QuoteID)
		if !o.QuoteParticipant.IsEmpty() {
			ci.Participant = proto.String(o.QuoteParticipant.String())
		}
		ci.QuotedMessage = &waE2E.Message{Conversation: proto.String(o.QuoteText)}
	}
	for _, m := range o.Mentions {
		ci.MentionedJID = append(ci.MentionedJID, m.String())
	}
	return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(o.Text), ContextInfo: ci}}
}

// SendOptions describe how a message is addressed.
type SendOptions struct {
	// ID is the message id; default a fresh random one.
	ID string
	// LIDAddressed: see TextOptions.LIDAddressed.
	LIDAddressed bool
	// Time is the server timestamp, default now.
	Time time.Time
}

// SendText sends a direct text message from the contact to the linked
// device and returns its id. It is delivered now if the device is logged
// in, else on its next login, and again on every login until the device
// sends a receipt for it.
func (c *Contact) SendText(ctx context.Context, o TextOptions) (string, error) {
	return c.Send(ctx, o.Message(), SendOptions{ID: o.ID, LIDAddressed: o.LIDAddressed, Time: o.Time})
}

// Send sends any message from the contact to the linked device.
func (c *Contact) Send(ctx context.Context, msg *waE2E.Message, o SendOptions) (string, error) {
	attrs := waBinary.Attrs{"notify": c.p.name}
	if o.LIDAddressed {
		attrs["from"] = c.p.lid
		attrs["sender_pn"] = c.p.pn
	} else {
		attrs["from"] = c.p.pn
		attrs["sender_lid"] = c.p.lid
	}
	return c.s.deliverDirect(ctx, c.p, attrs, msg, o)
}

// PhoneSendText plays the owner writing on their phone into chat (a
// contact's JID, a group, or the owner's own JID for "message yourself"):
// the linked device receives it as a message from its own account
// (IsFromMe). It returns the message id.
func (s *Server) PhoneSendText(ctx context.Context, chat types.JID, o TextOptions) (string, error) {
	return s.PhoneSend(ctx, chat, o.Message(), SendOptions{ID: o.ID, Time: o.Time})
}

// PhoneSend is PhoneSendText for any message; it is wrapped in a
// DeviceSentMessage as the phone does for its own other devices.
func (s *Server) PhoneSend(ctx context.Context, chat types.JID, msg *waE2E.Message, o SendOptions) (string, error) {
	dsm := &waE2E.Message{DeviceSentMessage: &waE2E.DeviceSentMessage{DestinationJID: proto.String(chat.String()), Message: msg}}
	attrs := waBinary.Attrs{"from": s.pn, "notify": s.name}
	if chat.ToNonAD() != s.pn && chat.ToNonAD() != s.lid {
		attrs["recipient"] = chat
	}
	return s.deliverDirect(ctx, s.phone, attrs, dsm, o)
}

// deliverDirect encrypts msg from p to the linked device and queues it.
func (s *Server) deliverDirect(ctx context.Context, p *party, attrs waBinary.Attrs, msg *waE2E.Message, o SendOptions) (string, error) {
	plain, err := proto.Marshal(msg)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	d := s.device
	s.mu.Unlock()
	if d == nil {
		return "", errors.New("whatsapptest: send: no linked device")
	}
	typ, ct, err := s.encryptFor(ctx, p, d, plain)
	if err != nil {
		return "", fmt.Errorf("whatsapptest: send: %w", err)
	}
	return s.queue(d, attrs, o, []waBinary.Node{{Tag: "enc", Attrs: waBinary.Attrs{"v": "2", "type": typ}, Content: ct}}), nil
}

func (s *Server) companionAddr(d *device) *protocol.SignalAddress {
	return s.deviceLID(d).SignalAddress()
}

func (s *Server) encryptFor(ctx context.Context, p *party, d *device, plain []byte) (string, []byte, error) {
	s.cryptoMu.Lock()
	defer s.cryptoMu.Unlock()
	return p.encrypt(ctx, s.companionAddr(d), func() (*prekey.Bundle, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var pk *keys.PreKey
		if len(d.preKeys) > 0 {
			pk, d.preKeys = d.preKeys[0], d.preKeys[1:]
		}
		return companionBundle(d, pk), nil
	}, plain)
}

// inbound is a message for the linked device, kept until it is receipted.
type inbound struct {
	id       string
	dev      uint16
	node     waBinary.Node
	receipts []string
	done     bool // receipt (not retry) or ack received
}

// queue stores a message node and writes it if the device is logged in.
func (s *Server) queue(d *device, attrs waBinary.Attrs, o SendOptions, content []waBinary.Node) string {
	id := o.ID
	if id == "" {
		id = randomID()
	}
	t := o.Time
	if t.IsZero() {
		t = time.Now()
	}
	attrs["id"] = id
	attrs["t"] = t.Unix()
	attrs["type"] = "text"
	in := &inbound{id: id, dev: d.id, node: waBinary.Node{Tag: "message", Attrs: attrs, Content: content}}
	s.mu.Lock()
	s.inbound = append(s.inbound, in)
	c := s.current
	s.notifyLocked()
	s.mu.Unlock()
	if c != nil {
		s.deliverMu.Lock()
		s.flushLocked(c)
		s.deliverMu.Unlock()
	}
	return id
}

// flushLocked writes every message not yet written on c and not yet
// receipted; s.deliverMu must be held. It returns how many it wrote.
func (s *Server) flushLocked(c *conn) int {
	s.mu.Lock()
	var todo []*inbound
	for _, in := range s.inbound {
		if !in.done && c.dev != nil && in.dev == c.dev.id && !c.sentIDs[in.id] {
			todo = append(todo, in)
			c.sentIDs[in.id] = true
		}
	}
	s.mu.Unlock()
	for _, in := range todo {
		_ = c.send(in.node)
	}
	return len(todo)
}

// Pending returns the ids of messages sent to the linked device that it
// has not receipted yet, oldest first; they are delivered again on its
// next login.
func (s *Server) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, in := range s.inbound {
		if !in.done {
			ids = append(ids, in.id)
		}
	}
	return ids
}

// Receipt is a <receipt> the client sent.
type Receipt struct {
	// ID is the receipted message id (one Receipt per id of a list).
	ID string
	// Type is "" (delivered), "inactive", "read", "read-self", "sender",
	// "retry", "played", ...
	Type string
	// To is the chat the receipt is for (the sender's JID as the client
	// saw it, or a group).
	To types.JID
	// Participant is the sender of a group message.
	Participant types.JID
	// Time is when the fake received it.
	Time time.Time
}

// Receipts returns every receipt the client sent, in order.
func (s *Server) Receipts() []Receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Receipt(nil), s.receipts...)
}

// WaitReceipt waits for a receipt for message id of a type other than
// "retry" and returns it.
func (s *Server) WaitReceipt(ctx context.Context, id string) (Receipt, error) {
	var r Receipt
	err := s.waitFor(ctx, "receipt "+id, func() bool {
		for _, x := range s.receipts {
			if x.ID == id && x.Type != "retry" {
				r = x
				return true
			}
		}
		return false
	})
	return r, err
}

func (s *Server) handleReceipt(n *waBinary.Node) {
	ag := n.AttrGetter()
	base := Receipt{
		Type:        ag.OptionalString("type"),
		To:          ag.OptionalJIDOrEmpty("to"),
		Participant: ag.OptionalJIDOrEmpty("participant"),
		Time:        time.Now(),
	}
	ids := []string{ag.OptionalString("id")}
	if list, ok := n.GetOptionalChildByTag("list"); ok {
		for _, it := range list.GetChildren() {
			if id, ok := it.Attrs["id"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		r := base
		r.ID = id
		s.receipts = append(s.receipts, r)
		if r.Type == "retry" {
			continue
		}
		for _, in := range s.inbound {
			if in.id == id {
				in.done = true
				in.receipts = append(in.receipts, r.Type)
			}
		}
	}
	s.notifyLocked()
}

func (s *Server) handleAck(n *waBinary.Node) {
	ag := n.AttrGetter()
	id := ag.OptionalString("id")
	if ag.OptionalString("class") != "message" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range s.inbound {
		if in.id == id {
			in.done = true
		}
	}
	s.notifyLocked()
}

// ChatPresence is a <chatstate> the client sent (typing indicators).
type ChatPresence struct {
	// To is the chat the client is typing in.
	To types.JID
	// State is "composing" or "paused".
	State string
	// Media is "audio" for recording, else "".
	Media string
	// Time is when the fake received it.
	Time time.Time
}

// ChatPresences returns the chat states the client sent.
func (s *Server) ChatPresences() []ChatPresence {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatPresence(nil), s.chat...)
}

// WaitChatPresence waits for a chat state matching match.
func (s *Server) WaitChatPresence(ctx context.Context, match func(ChatPresence) bool) (ChatPresence, error) {
	var r ChatPresence
	err := s.waitFor(ctx, "chat presence", func() bool {
		for _, x := range s.chat {
			if match(x) {
				r = x
				return true
			}
		}
		return false
	})
	return r, err
}

func (s *Server) handleChatState(n *waBinary.Node) {
	to, _ := n.Attrs["to"].(types.JID)
	cp := ChatPresence{To: to, Time: time.Now()}
	if ch := n.GetChildren(); len(ch) > 0 {
		cp.State = ch[0].Tag
		cp.Media, _ = ch[0].Attrs["media"].(string)
	}
	s.mu.Lock()
	s.chat = append(s.chat, cp)
	s.notifyLocked()
	s.mu.Unlock()
}

// Presence is a <presence> the client sent (available/unavailable).
type Presence struct {
	// Type is "available" or "unavailable".
	Type string
	// Name is the push name the client announced.
	Name string
	// Time is when the fake received it.
	Time time.Time
}

// Presences returns the presences the client sent.
func (s *Server) Presences() []Presence {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Presence(nil), s.presence...)
}

func (s *Server) handlePresence(n *waBinary.Node) {
	ag := n.AttrGetter()
	p := Presence{Type: ag.OptionalString("type"), Name: ag.OptionalString("name"), Time: time.Now()}
	s.mu.Lock()
	s.presence = append(s.presence, p)
	s.notifyLocked()
	s.mu.Unlock()
}

// ReceiptOptions describe a receipt a contact sends for messages the
// linked device sent.
type ReceiptOptions struct {
	// IDs are the receipted message ids (at least one).
	IDs []string
	// Type is "" (delivered), "read" or "played".
	Type string
	// Group, when set, makes it a receipt in that group chat.
	Group *Group
	// LIDAddressed sends it from the contact's LID instead of the phone
	// number (direct chats only).
	LIDAddressed bool
}

// SendReceipt sends a receipt from the contact to the logged-in linked
// device (events.Receipt). Receipts are not stored for later delivery: it
// fails when no device is logged in.
func (c *Contact) SendReceipt(ctx context.Context, o ReceiptOptions) error {
	if len(o.IDs) == 0 {
		return errors.New("whatsapptest: receipt: no ids")
	}
	conn, err := c.s.loggedInConn()
	if err != nil {
		return err
	}
	attrs := waBinary.Attrs{"id": o.IDs[0], "t": time.Now().Unix()}
	if o.Type != "" {
		attrs["type"] = o.Type
	}
	switch {
	case o.Group != nil:
		attrs["from"] = o.Group.jid
		attrs["participant"] = c.p.lid
	case o.LIDAddressed:
		attrs["from"] = c.p.lid
	default:
		attrs["from"] = c.p.pn
	}
	n := waBinary.Node{Tag: "receipt", Attrs: attrs}
	if len(o.IDs) > 1 {
		items := make([]waBinary.Node, 0, len(o.IDs)-1)
		for _, id := range o.IDs[1:] {
			items = append(items, waBinary.Node{Tag: "item", Attrs: waBinary.Attrs{"id": id}})
		}
		n.Content = []waBinary.Node{{Tag: "list", Content: items}}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.s.deliverMu.Lock()
	defer c.s.deliverMu.Unlock()
	return conn.send(n)
}
