package whatsapptest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

// device is the linked (companion) device as the server knows it: what it
// registered while pairing and the prekeys it uploaded since.
type device struct {
	id           uint16
	noise        [32]byte
	identity     [32]byte
	regID        uint32
	signedPreKey *keys.PreKey // public half and signature
	preKeys      []*keys.PreKey
}

// registration is what a client that is not logged in sent in its
// ClientPayload, waiting for PairQR.
type registration struct {
	regID        uint32
	identity     [32]byte
	signedPreKey *keys.PreKey
	refs         []string
}

// conn is one websocket connection after the handshake.
type conn struct {
	s      *Server
	fc     *frameConn
	ctx    context.Context
	cancel context.CancelFunc
	noise  [32]byte
	reg    *registration // before pairing
	link   *linkCode     // s.mu: phone-number pairing in progress
	dev    *device       // after login

	active   bool            // s.mu: sent passive=active after login
	loggedIn bool            // s.mu
	sentIDs  map[string]bool // deliverMu: inbound ids written on this conn

	nextID  atomic.Uint64
	wmu     sync.Mutex
	waiters map[string]chan *waBinary.Node
}

// closeGrace is how long the server lets a client read a final
// <failure> or <stream:error> before it closes the socket, as the real
// server does; the client handles the node before it sees the close.
const closeGrace = 500 * time.Millisecond

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 25)
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	c := &conn{s: s, fc: &frameConn{ws: ws}, ctx: ctx, cancel: cancel, sentIDs: map[string]bool{}, waiters: map[string]chan *waBinary.Node{}}
	hctx, hcancel := context.WithTimeout(ctx, 20*time.Second)
	static, payload, err := c.fc.handshake(hctx, s.static, s.chain)
	hcancel()
	if err != nil {
		s.log.Warn("handshake failed", "err", err)
		_ = ws.CloseNow()
		return
	}
	c.noise = *static
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.eventLocked(EventConnected, "")
	s.mu.Unlock()
	defer s.dropConn(c)

	if payload.Username != nil {
		s.login(c, payload)
	} else {
		s.register(c, payload)
	}
	for {
		data, err := c.fc.readPlain(ctx)
		if err != nil {
			return
		}
		raw, err := waBinary.Unpack(data)
		if err != nil {
			s.log.Warn("unpack node", "err", err)
			continue
		}
		node, err := waBinary.Unmarshal(raw)
		if err != nil {
			s.log.Warn("unmarshal node", "err", err)
			continue
		}
		s.log.Debug("recv", "node", node.XMLString())
		c.handle(node)
	}
}

func (s *Server) dropConn(c *conn) {
	c.closeNow()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return
	}
	delete(s.conns, c)
	if s.current == c {
		s.current = nil
	}
	s.eventLocked(EventClosed, "")
}

func (c *conn) closeNow() {
	c.cancel()
	_ = c.fc.ws.CloseNow()
}

func (c *conn) closeLater() {
	time.AfterFunc(closeGrace, c.closeNow)
}

func (c *conn) send(n waBinary.Node) error {
	data, err := waBinary.Marshal(n)
	if err != nil {
		return err
	}
	c.s.log.Debug("send", "node", n.XMLString())
	return c.fc.writePlain(c.ctx, data)
}

func (c *conn) newID() string {
	return "srv-" + strconv.FormatUint(c.nextID.Add(1), 10)
}

// request sends an iq and waits for the client's answer with the same id.
func (c *conn) request(ctx context.Context, n waBinary.Node) (*waBinary.Node, error) {
	id, _ := n.Attrs["id"].(string)
	ch := make(chan *waBinary.Node, 1)
	c.wmu.Lock()
	c.waiters[id] = ch
	c.wmu.Unlock()
	defer func() {
		c.wmu.Lock()
		delete(c.waiters, id)
		c.wmu.Unlock()
	}()
	if err := c.send(n); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, errors.New("connection closed")
	}
}

func (c *conn) handle(n *waBinary.Node) {
	switch n.Tag {
	case "iq":
		typ, _ := n.Attrs["type"].(string)
		if typ == "result" || typ == "error" {
			id, _ := n.Attrs["id"].(string)
			c.wmu.Lock()
			ch := c.waiters[id]
			c.wmu.Unlock()
			if ch != nil {
				ch <- n
			}
			return
		}
		c.s.handleIQ(c, n)
	case "message":
		c.s.handleOutbound(c, n)
	case "receipt":
		c.s.handleReceipt(n)
	case "ack":
		c.s.handleAck(n)
	case "chatstate":
		c.s.handleChatState(n)
	case "presence":
		c.s.handlePresence(n)
	}
}

func (s *Server) register(c *conn, p *waWa6.ClientPayload) {
	d := p.GetDevicePairingData()
	if len(d.GetEIdent()) != 32 || len(d.GetESkeyVal()) != 32 || len(d.GetESkeySig()) != 64 || len(d.GetERegid()) != 4 || len(d.GetESkeyID()) != 3 {
		s.log.Warn("registration payload incomplete")
		c.closeNow()
		return
	}
	reg := &registration{regID: binary.BigEndian.Uint32(d.GetERegid())}
	copy(reg.identity[:], d.GetEIdent())
	reg.signedPreKey = &keys.PreKey{
		KeyPair:   keys.KeyPair{Pub: (*[32]byte)(append([]byte(nil), d.GetESkeyVal()...))},
		KeyID:     binary.BigEndian.Uint32(append([]byte{0}, d.GetESkeyID()...)),
		Signature: (*[64]byte)(append([]byte(nil), d.GetESkeySig()...)),
	}
	var refs []waBinary.Node
	for range 6 {
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		ref := "2@" + base64.StdEncoding.EncodeToString(b)
		reg.refs = append(reg.refs, ref)
		refs = append(refs, waBinary.Node{Tag: "ref", Content: []byte(ref)})
	}
	s.mu.Lock()
	c.reg = reg
	s.mu.Unlock()
	_ = c.send(waBinary.Node{Tag: "iq", Attrs: waBinary.Attrs{
		"from": types.ServerJID, "type": "set", "id": c.newID(), "xmlns": "md",
	}, Content: []waBinary.Node{{Tag: "pair-device", Content: refs}}})
}

func (s *Server) login(c *conn, p *waWa6.ClientPayload) {
	user := strconv.FormatUint(p.GetUsername(), 10)
	s.mu.Lock()
	d := s.device
	var refuse *Failure
	switch {
	case s.failure != nil:
		refuse = s.failure
	case d == nil || user != s.pn.User || uint16(p.GetDevice()) != d.id || c.noise != d.noise:
		refuse = &Failure{Reason: FailureLoggedOut}
	}
	if refuse != nil {
		s.eventLocked(EventLoginRefused, strconv.Itoa(refuse.Reason))
		s.mu.Unlock()
		attrs := waBinary.Attrs{"reason": refuse.Reason}
		if refuse.Code != 0 {
			attrs["code"] = refuse.Code
		}
		if refuse.Expire > 0 {
			attrs["expire"] = int(refuse.Expire / time.Second)
		}
		_ = c.send(waBinary.Node{Tag: "failure", Attrs: attrs})
		c.closeLater()
		return
	}
	old := s.current
	s.current = c
	c.dev = d
	c.loggedIn = true
	s.logins++
	s.eventLocked(EventLoggedIn, strconv.Itoa(int(d.id)))
	s.mu.Unlock()
	if old != nil && old != c {
		_ = old.send(waBinary.Node{Tag: "stream:error", Content: []waBinary.Node{{Tag: "conflict", Attrs: waBinary.Attrs{"type": "replaced"}}}})
		old.closeLater()
	}
	s.deliverMu.Lock()
	_ = c.send(waBinary.Node{Tag: "success", Attrs: waBinary.Attrs{
		"t": time.Now().Unix(), "lid": s.deviceLID(d), "creation": time.Now().Unix() - 86400,
	}})
	n := s.flushLocked(c)
	s.deliverMu.Unlock()
	_ = c.send(waBinary.Node{Tag: "ib", Content: []waBinary.Node{{Tag: "offline", Attrs: waBinary.Attrs{"count": n}}}})
}

func (s *Server) answer(c *conn, iq *waBinary.Node, content ...waBinary.Node) {
	attrs := waBinary.Attrs{"id": iq.Attrs["id"], "type": "result", "from": types.ServerJID}
	if to, ok := iq.Attrs["to"].(types.JID); ok {
		attrs["from"] = to
	}
	n := waBinary.Node{Tag: "iq", Attrs: attrs}
	if len(content) > 0 {
		n.Content = content
	}
	_ = c.send(n)
}

func (s *Server) answerError(c *conn, iq *waBinary.Node, code int, text string) {
	attrs := waBinary.Attrs{"id": iq.Attrs["id"], "type": "error", "from": types.ServerJID}
	if to, ok := iq.Attrs["to"].(types.JID); ok {
		attrs["from"] = to
	}
	_ = c.send(waBinary.Node{Tag: "iq", Attrs: attrs, Content: []waBinary.Node{{Tag: "error", Attrs: waBinary.Attrs{"code": code, "text": text}}}})
}

// IQ is an info query the client sent.
type IQ struct {
	// Namespace is the xmlns, e.g. "encrypt", "usync", "w:g2", "w:p".
	Namespace string
	// Type is "get" or "set".
	Type string
	// Child is the tag of the first child, e.g. "count", "usync", "query".
	Child string
	// Time is when the fake received it.
	Time time.Time
}

// IQs returns every info query the client sent, answered or not.
func (s *Server) IQs() []IQ {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]IQ(nil), s.iqs...)
}

func (s *Server) handleIQ(c *conn, iq *waBinary.Node) {
	xmlns, _ := iq.Attrs["xmlns"].(string)
	typ, _ := iq.Attrs["type"].(string)
	children := iq.GetChildren()
	child := ""
	if len(children) > 0 {
		child = children[0].Tag
	}
	s.mu.Lock()
	s.iqs = append(s.iqs, IQ{Namespace: xmlns, Type: typ, Child: child, Time: time.Now()})
	s.notifyLocked()
	s.mu.Unlock()
	switch {
	case xmlns == "encrypt" && child == "count":
		s.mu.Lock()
		n := 0
		if c.dev != nil {
			n = len(c.dev.preKeys)
		}
		s.mu.Unlock()
		s.answer(c, iq, waBinary.Node{Tag: "count", Attrs: waBinary.Attrs{"value": n}})
	case xmlns == "encrypt" && typ == "set":
		s.uploadPreKeys(c, iq)
		s.answer(c, iq)
	case xmlns == "encrypt" && child == "key":
		s.answer(c, iq, s.preKeyBundles(c, children[0]))
	case xmlns == "passive":
		s.answer(c, iq)
		if child == "active" {
			s.mu.Lock()
			if c.loggedIn {
				c.active = true
				s.notifyLocked()
			}
			s.mu.Unlock()
		}
	case xmlns == "md" && child == "link_code_companion_reg":
		s.handleLinkCode(c, iq, children[0])
	case xmlns == "w:m" && child == "media_conn":
		s.answer(c, iq, s.mediaConn())
	case xmlns == "usync":
		s.answer(c, iq, s.usync(c, children[0]))
	case xmlns == "w:g2" && typ == "get" && child == "query":
		to, _ := iq.Attrs["to"].(types.JID)
		node, ok := s.groupInfo(to)
		if !ok {
			s.answerError(c, iq, 404, "item-not-found")
			return
		}
		s.answer(c, iq, node)
	default:
		// w:p pings and whatever the fake does not model: an empty result.
		s.answer(c, iq)
	}
}

func (s *Server) uploadPreKeys(c *conn, iq *waBinary.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.dev == nil {
		return
	}
	list, _ := iq.GetOptionalChildByTag("list")
	for _, k := range list.GetChildren() {
		idb, _ := k.GetChildByTag("id").Content.([]byte)
		val, _ := k.GetChildByTag("value").Content.([]byte)
		if len(idb) != 3 || len(val) != 32 {
			continue
		}
		pub := [32]byte(val)
		c.dev.preKeys = append(c.dev.preKeys, &keys.PreKey{
			KeyPair: keys.KeyPair{Pub: &pub},
			KeyID:   binary.BigEndian.Uint32(append([]byte{0}, idb...)),
		})
	}
}

// partyFor resolves a device JID the client addresses to one of the fake's
// Signal parties: a contact's or the owner's phone (device 0).
func (s *Server) partyFor(jid types.JID) *party {
	if jid.Device != 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.partyForLocked(jid)
}

func (s *Server) partyForLocked(jid types.JID) *party {
	if jid.Device != 0 {
		return nil
	}
	switch jid.Server {
	case types.DefaultUserServer:
		if jid.User == s.pn.User {
			return s.phone
		}
		if ct := s.contacts[jid.User]; ct != nil && ct.p.pn.User == jid.User {
			return ct.p
		}
	case types.HiddenUserServer:
		if jid.User == s.lid.User {
			return s.phone
		}
		if ct := s.contacts[jid.User]; ct != nil && ct.p.lid.User == jid.User {
			return ct.p
		}
	}
	return nil
}

func (s *Server) preKeyBundles(c *conn, key waBinary.Node) waBinary.Node {
	var users []waBinary.Node
	for _, u := range key.GetChildren() {
		jid, ok := u.Attrs["jid"].(types.JID)
		if !ok {
			continue
		}
		p := s.partyFor(jid)
		if p == nil {
			users = append(users, waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": jid}, Content: []waBinary.Node{{Tag: "error", Attrs: waBinary.Attrs{"code": 404, "text": "item-not-found"}}}})
			continue
		}
		s.cryptoMu.Lock()
		n, err := p.bundleNode(s.ctx, jid)
		s.cryptoMu.Unlock()
		if err != nil {
			s.log.Warn("prekey bundle", "jid", jid, "err", err)
			continue
		}
		users = append(users, n)
	}
	return waBinary.Node{Tag: "list", Content: users}
}

// usync answers device, LID and contact queries.
func (s *Server) usync(c *conn, q waBinary.Node) waBinary.Node {
	query := q.GetChildByTag("query")
	list := q.GetChildByTag("list")
	var users []waBinary.Node
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range list.GetChildren() {
		jid, ok := u.Attrs["jid"].(types.JID)
		var contactQuery string
		if !ok {
			cq, _ := u.GetChildByTag("contact").Content.([]byte)
			contactQuery = string(cq)
			jid, _ = types.ParseJID(contactQuery)
			jid.Server = types.DefaultUserServer
			if len(jid.User) > 0 && jid.User[0] == '+' {
				jid.User = jid.User[1:]
			}
		}
		p := s.partyForLocked(jid.ToNonAD())
		var content []waBinary.Node
		for _, qc := range query.GetChildren() {
			switch qc.Tag {
			case "devices":
				var devs []waBinary.Node
				if p != nil {
					devs = append(devs, waBinary.Node{Tag: "device", Attrs: waBinary.Attrs{"id": 0}})
				}
				content = append(content, waBinary.Node{Tag: "devices", Content: []waBinary.Node{{Tag: "device-list", Content: devs}}})
			case "lid":
				if p != nil {
					content = append(content, waBinary.Node{Tag: "lid", Attrs: waBinary.Attrs{"val": p.lid}})
				} else {
					content = append(content, waBinary.Node{Tag: "lid"})
				}
			case "contact":
				typ := "out"
				if p != nil {
					typ = "in"
				}
				content = append(content, waBinary.Node{Tag: "contact", Attrs: waBinary.Attrs{"type": typ}, Content: []byte(contactQuery)})
			case "status":
				content = append(content, waBinary.Node{Tag: "status"})
			}
		}
		users = append(users, waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": jid}, Content: content})
	}
	return waBinary.Node{Tag: "usync", Attrs: waBinary.Attrs{"sid": q.Attrs["sid"], "mode": q.Attrs["mode"], "last": "true", "index": "0", "context": q.Attrs["context"]},
		Content: []waBinary.Node{{Tag: "list", Content: users}}}
}
