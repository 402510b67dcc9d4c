package whatsapptest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// PairQR plays the owner's phone scanning the QR code the client shows
// (events.QR: "ref,noiseKey,identityKey,advSecret"): it finds the waiting
// connection, sends pair-success with a device identity signed by the
// account key, checks the client's pair-device-sign answer and then sends
// stream error 515, after which the client reconnects by itself and logs
// in (see WaitLoggedIn). It returns once the client confirmed the pairing.
// A device linked before is replaced: its stored messages are dropped.
func (s *Server) PairQR(ctx context.Context, qr string) error {
	parts := strings.Split(qr, ",")
	if len(parts) != 4 {
		return fmt.Errorf("whatsapptest: pair: QR has %d parts, want 4", len(parts))
	}
	noise, err1 := base64.StdEncoding.DecodeString(parts[1])
	ident, err2 := base64.StdEncoding.DecodeString(parts[2])
	adv, err3 := base64.StdEncoding.DecodeString(parts[3])
	if err := errors.Join(err1, err2, err3); err != nil || len(noise) != 32 || len(ident) != 32 {
		return fmt.Errorf("whatsapptest: pair: bad QR keys: %v", err)
	}
	s.mu.Lock()
	var c *conn
	for cc := range s.conns {
		if cc.reg != nil && cc.noise == [32]byte(noise) && slices.Contains(cc.reg.refs, parts[0]) {
			c = cc
		}
	}
	if c == nil {
		s.mu.Unlock()
		return errors.New("whatsapptest: pair: no connection waiting with this QR code")
	}
	s.mu.Unlock()
	return s.completePairing(ctx, c, [32]byte(ident), adv)
}

// completePairing plays the phone accepting the link: pair-success with a
// device identity signed by the account key and authenticated with the
// companion's ADV secret, then the client's pair-device-sign, then 515.
func (s *Server) completePairing(ctx context.Context, c *conn, ident [32]byte, adv []byte) error {
	s.mu.Lock()
	devID := s.nextDev
	s.nextDev++
	reg := c.reg
	s.mu.Unlock()
	if reg.identity != ident {
		return errors.New("whatsapptest: pair: identity key differs from the registration")
	}
	noise := c.noise

	details, err := proto.Marshal(&waAdv.ADVDeviceIdentity{
		RawID:     proto.Uint32(uint32(time.Now().UnixNano())),
		Timestamp: proto.Uint64(uint64(time.Now().Unix())),
		KeyIndex:  proto.Uint32(uint32(devID)),
	})
	if err != nil {
		return err
	}
	accountKey := s.phone.dev.IdentityKey
	msg := slices.Concat(whatsmeow.AdvAccountSignaturePrefix, details, ident[:])
	accSig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*accountKey.Priv), msg)
	signed, err := proto.Marshal(&waAdv.ADVSignedDeviceIdentity{
		Details:             details,
		AccountSignatureKey: accountKey.Pub[:],
		AccountSignature:    accSig[:],
	})
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, adv)
	mac.Write(signed)
	container, err := proto.Marshal(&waAdv.ADVSignedDeviceIdentityHMAC{Details: signed, HMAC: mac.Sum(nil)})
	if err != nil {
		return err
	}
	pn := types.JID{User: s.pn.User, Device: devID, Server: types.DefaultUserServer}
	lid := types.JID{User: s.lid.User, Device: devID, Server: types.HiddenUserServer}
	resp, err := c.request(ctx, waBinary.Node{Tag: "iq", Attrs: waBinary.Attrs{
		"from": types.ServerJID, "type": "set", "id": c.newID(), "xmlns": "md",
	}, Content: []waBinary.Node{{Tag: "pair-success", Content: []waBinary.Node{
		{Tag: "device-identity", Content: container},
		{Tag: "biz", Attrs: waBinary.Attrs{"name": ""}},
		{Tag: "device", Attrs: waBinary.Attrs{"jid": pn, "lid": lid}},
		{Tag: "platform", Attrs: waBinary.Attrs{"name": "android"}},
	}}}})
	if err != nil {
		return fmt.Errorf("whatsapptest: pair: %w", err)
	}
	if t, _ := resp.Attrs["type"].(string); t != "result" {
		return fmt.Errorf("whatsapptest: pair: client refused: %s", resp.XMLString())
	}
	signNode, ok := resp.GetOptionalChildByTag("pair-device-sign", "device-identity")
	raw, _ := signNode.Content.([]byte)
	var back waAdv.ADVSignedDeviceIdentity
	if !ok || proto.Unmarshal(raw, &back) != nil {
		return fmt.Errorf("whatsapptest: pair: bad pair-device-sign: %s", resp.XMLString())
	}
	devMsg := slices.Concat(whatsmeow.AdvDeviceSignaturePrefix, back.GetDetails(), ident[:], accountKey.Pub[:])
	if !bytes.Equal(back.GetDetails(), details) || len(back.GetDeviceSignature()) != 64 ||
		!ecc.VerifySignature(ecc.NewDjbECPublicKey(ident), devMsg, [64]byte(back.GetDeviceSignature())) {
		return errors.New("whatsapptest: pair: device signature does not verify")
	}

	s.mu.Lock()
	s.device = &device{
		id: devID, noise: noise, identity: reg.identity,
		regID: reg.regID, signedPreKey: reg.signedPreKey,
	}
	s.inbound = nil
	s.eventLocked(EventPaired, strconv.Itoa(int(devID)))
	s.mu.Unlock()
	_ = c.send(waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": "515"}})
	return nil
}

// randomID is a message id in WhatsApp's style (3EB0 + 18 hex digits).
func randomID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return fmt.Sprintf("3EB0%X", b)
}
