package whatsapptest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// Group is a simulated group chat, LID-addressed as WhatsApp groups are
// since the LID migration. The account owner is always a member.
type Group struct {
	s       *Server
	jid     types.JID
	name    string
	members []*Contact
	created time.Time
}

// GroupOptions describe a group.
type GroupOptions struct {
	// ID is the group id without "@g.us", e.g. "120363000000000001".
	ID string
	// Name is the subject, default "Group".
	Name string
	// Members are the contacts in the group besides the owner.
	Members []*Contact
}

// AddGroup creates a group the owner is a member of.
func (s *Server) AddGroup(opts GroupOptions) (*Group, error) {
	if opts.ID == "" {
		return nil, errors.New("whatsapptest: add group: id is required")
	}
	if opts.Name == "" {
		opts.Name = "Group"
	}
	g := &Group{s: s, jid: types.NewJID(opts.ID, types.GroupServer), name: opts.Name, members: opts.Members, created: time.Now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[g.jid.String()]; ok {
		return nil, fmt.Errorf("whatsapptest: add group %s: already exists", g.jid)
	}
	s.groups[g.jid.String()] = g
	return g, nil
}

// JID is the group's JID, e.g. 120363000000000001@g.us.
func (g *Group) JID() types.JID { return g.jid }

// groupParties are the Signal parties that receive a group's messages:
// the members' phones and the owner's phone.
func (s *Server) groupParties(group types.JID) []*party {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[group.String()]
	if g == nil {
		return nil
	}
	ps := []*party{s.phone}
	for _, m := range g.members {
		ps = append(ps, m.p)
	}
	return ps
}

func (s *Server) groupInfo(jid types.JID) (waBinary.Node, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[jid.String()]
	if g == nil {
		return waBinary.Node{}, false
	}
	parts := []waBinary.Node{{Tag: "participant", Attrs: waBinary.Attrs{"jid": s.lid, "phone_number": s.pn, "type": "superadmin"}}}
	for _, m := range g.members {
		parts = append(parts, waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": m.p.lid, "phone_number": m.p.pn}})
	}
	return waBinary.Node{Tag: "group", Attrs: waBinary.Attrs{
		"id": g.jid.User, "subject": g.name, "creation": g.created.Unix(), "s_t": g.created.Unix(),
		"creator": s.lid, "creator_pn": s.pn, "addressing_mode": string(types.AddressingModeLID),
		"size": strconv.Itoa(len(parts)),
	}, Content: parts}, true
}

// SendGroupText sends a text message from the contact into group. The
// first message of a contact in a group to a linked device also carries
// the contact's sender key distribution (a pkmsg/msg beside the skmsg), as
// WhatsApp does; the client then sees two events.Message, one with only the
// distribution. TextOptions.LIDAddressed is ignored: groups are LID
// addressed (participant=<lid>, participant_pn=<phone>).
func (c *Contact) SendGroupText(ctx context.Context, g *Group, o TextOptions) (string, error) {
	return c.SendGroup(ctx, g, o.Message(), SendOptions{ID: o.ID, Time: o.Time})
}

// SendGroup is SendGroupText for any message.
func (c *Contact) SendGroup(ctx context.Context, g *Group, msg *waE2E.Message, o SendOptions) (string, error) {
	s := c.s
	member := false
	for _, m := range g.members {
		member = member || m == c
	}
	if !member {
		return "", fmt.Errorf("whatsapptest: send to %s: %s is not a member", g.jid, c.p.pn)
	}
	s.mu.Lock()
	d := s.device
	s.mu.Unlock()
	if d == nil {
		return "", errors.New("whatsapptest: send: no linked device")
	}
	plain, err := proto.Marshal(msg)
	if err != nil {
		return "", err
	}
	key := g.jid.String() + "|" + c.p.lid.User + "|" + strconv.Itoa(int(d.id))
	var content []waBinary.Node
	s.cryptoMu.Lock()
	skdm, err := c.p.groupDistribution(ctx, g.jid)
	var sk []byte
	if err == nil {
		sk, err = c.p.groupEncrypt(ctx, g.jid, plain)
	}
	s.cryptoMu.Unlock()
	if err != nil {
		return "", fmt.Errorf("whatsapptest: group encrypt: %w", err)
	}
	s.mu.Lock()
	needDist := !s.skdmSent[key]
	s.skdmSent[key] = true
	s.mu.Unlock()
	if needDist {
		dist, _ := proto.Marshal(&waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{
			GroupID: proto.String(g.jid.String()), AxolotlSenderKeyDistributionMessage: skdm,
		}})
		typ, ct, err := s.encryptFor(ctx, c.p, d, dist)
		if err != nil {
			return "", fmt.Errorf("whatsapptest: send: %w", err)
		}
		content = append(content, waBinary.Node{Tag: "enc", Attrs: waBinary.Attrs{"v": "2", "type": typ}, Content: ct})
	}
	content = append(content, waBinary.Node{Tag: "enc", Attrs: waBinary.Attrs{"v": "2", "type": "skmsg"}, Content: sk})
	attrs := waBinary.Attrs{
		"from": g.jid, "participant": c.p.lid, "participant_pn": c.p.pn,
		"addressing_mode": string(types.AddressingModeLID), "notify": c.p.name,
	}
	return s.queue(d, attrs, o, content), nil
}
