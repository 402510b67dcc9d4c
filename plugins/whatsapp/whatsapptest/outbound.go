package whatsapptest

import (
	"context"
	"fmt"
	"slices"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// SentMessage is a message the linked device sent, decrypted.
type SentMessage struct {
	// ID is the message id the client chose.
	ID string
	// To is the chat: a contact's JID (phone number or LID, as the client
	// addressed it), a group, or the owner's own JID.
	To types.JID
	// Recipients are the devices that could decrypt their copy: contacts'
	// phones, group members' phones and the owner's phone (which gets a
	// DeviceSentMessage copy of every direct message).
	Recipients []types.JID
	// Message is the message as the recipient sees it (for a message to the
	// owner's own chat: the content of the phone's DeviceSentMessage).
	Message *waE2E.Message
	// Errors are per-device decryption failures, if any.
	Errors []string
	// Time is when the fake received it.
	Time time.Time
}

// Text is the message's text: Conversation or ExtendedTextMessage.Text.
func (m SentMessage) Text() string {
	if t := m.Message.GetConversation(); t != "" {
		return t
	}
	return m.Message.GetExtendedTextMessage().GetText()
}

// ContextInfo is the quoted/mention context of a text message, or nil.
func (m SentMessage) ContextInfo() *waE2E.ContextInfo {
	return m.Message.GetExtendedTextMessage().GetContextInfo()
}

// QuotedID is the id of the message this one replies to, or "".
func (m SentMessage) QuotedID() string { return m.ContextInfo().GetStanzaID() }

// Sent returns every message the linked device sent, in order.
func (s *Server) Sent() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SentMessage(nil), s.sent...)
}

// WaitSent waits for a sent message matching match (nil: any) and returns
// the first one.
func (s *Server) WaitSent(ctx context.Context, match func(SentMessage) bool) (SentMessage, error) {
	var r SentMessage
	err := s.waitFor(ctx, "sent message", func() bool {
		for _, m := range s.sent {
			if match == nil || match(m) {
				r = m
				return true
			}
		}
		return false
	})
	return r, err
}

// handleOutbound decrypts a <message> from the linked device for every
// recipient device and acknowledges it.
func (s *Server) handleOutbound(c *conn, n *waBinary.Node) {
	ag := n.AttrGetter()
	id := ag.OptionalString("id")
	to := ag.OptionalJIDOrEmpty("to")
	s.mu.Lock()
	d := c.dev
	s.mu.Unlock()
	sm := SentMessage{ID: id, To: to, Time: time.Now()}
	if d == nil {
		return
	}
	sender := s.companionAddr(d)
	var direct, own *waE2E.Message
	s.cryptoMu.Lock()
	if parts, ok := n.GetOptionalChildByTag("participants"); ok {
		for _, t := range parts.GetChildren() {
			jid, _ := t.Attrs["jid"].(types.JID)
			enc, ok := t.GetOptionalChildByTag("enc")
			if !ok {
				continue
			}
			typ, _ := enc.Attrs["type"].(string)
			content, _ := enc.Content.([]byte)
			p := s.partyFor(jid)
			if p == nil {
				sm.Errors = append(sm.Errors, fmt.Sprintf("%s: unknown device", jid))
				continue
			}
			pt, err := p.decrypt(s.ctx, sender, typ, content)
			if err != nil {
				sm.Errors = append(sm.Errors, fmt.Sprintf("%s: %v", jid, err))
				continue
			}
			var msg waE2E.Message
			if err := proto.Unmarshal(pt, &msg); err != nil {
				sm.Errors = append(sm.Errors, fmt.Sprintf("%s: %v", jid, err))
				continue
			}
			if !slices.Contains(sm.Recipients, jid) {
				// whatsmeow encrypts a message to the own chat twice for
				// each own device (it asks for the devices of [to, own]).
				sm.Recipients = append(sm.Recipients, jid)
			}
			if skdm := msg.GetSenderKeyDistributionMessage(); skdm != nil && to.Server == types.GroupServer {
				if err := p.groupProcess(s.ctx, to, sender, skdm.GetAxolotlSenderKeyDistributionMessage()); err != nil {
					sm.Errors = append(sm.Errors, fmt.Sprintf("%s: sender key: %v", jid, err))
				}
			}
			if dsm := msg.GetDeviceSentMessage(); dsm != nil {
				own = dsm.GetMessage()
			} else if msg.GetSenderKeyDistributionMessage() == nil {
				direct = &msg
			}
		}
	}
	for _, enc := range n.GetChildrenByTag("enc") {
		if t, _ := enc.Attrs["type"].(string); t != "skmsg" || to.Server != types.GroupServer {
			continue
		}
		content, _ := enc.Content.([]byte)
		for _, p := range s.groupParties(to) {
			pt, err := p.groupDecrypt(s.ctx, to, sender, content)
			if err != nil {
				sm.Errors = append(sm.Errors, fmt.Sprintf("%s: skmsg: %v", p.lid, err))
				continue
			}
			var msg waE2E.Message
			if err := proto.Unmarshal(pt, &msg); err == nil && direct == nil {
				direct = &msg
			}
		}
	}
	s.cryptoMu.Unlock()
	sm.Message = direct
	if sm.Message == nil {
		sm.Message = own
	}
	_ = c.send(waBinary.Node{Tag: "ack", Attrs: waBinary.Attrs{"class": "message", "id": id, "t": time.Now().Unix(), "from": to}})
	s.mu.Lock()
	s.sent = append(s.sent, sm)
	s.notifyLocked()
	s.mu.Unlock()
}
