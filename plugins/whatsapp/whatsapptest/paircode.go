package whatsapptest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"go.mau.fi/whatsmeow/util/keys"
)

// linkCode is a phone-number pairing a connection asked for with
// Client.PairPhone (stage companion_hello), until the client's
// companion_finish arrives.
type linkCode struct {
	ref     string
	phone   string
	wrapped []byte // salt(32) iv(16) encrypted companion ephemeral key(32)
	started bool   // PairCode took it
	bundle  []byte // wrapped key bundle from companion_finish
	ident   []byte // companion_identity_public
}

// handleLinkCode answers the md link_code_companion_reg IQs.
func (s *Server) handleLinkCode(c *conn, iq *waBinary.Node, reg waBinary.Node) {
	ag := reg.AttrGetter()
	switch ag.OptionalString("stage") {
	case "companion_hello":
		wrapped, _ := reg.GetChildByTag("link_code_pairing_wrapped_companion_ephemeral_pub").Content.([]byte)
		if len(wrapped) != 80 {
			s.answerError(c, iq, 400, "bad-request")
			return
		}
		jid := ag.OptionalJIDOrEmpty("jid")
		lc := &linkCode{ref: randomID(), phone: jid.User, wrapped: wrapped}
		s.mu.Lock()
		c.link = lc
		s.notifyLocked()
		s.mu.Unlock()
		s.answer(c, iq, waBinary.Node{Tag: "link_code_companion_reg", Content: []waBinary.Node{
			{Tag: "link_code_pairing_ref", Content: []byte(lc.ref)},
		}})
	case "companion_finish":
		bundle, _ := reg.GetChildByTag("link_code_pairing_wrapped_key_bundle").Content.([]byte)
		ident, _ := reg.GetChildByTag("companion_identity_public").Content.([]byte)
		ref, _ := reg.GetChildByTag("link_code_pairing_ref").Content.([]byte)
		s.mu.Lock()
		lc := c.link
		ok := lc != nil && lc.started && string(ref) == lc.ref
		s.mu.Unlock()
		if !ok {
			s.answerError(c, iq, 400, "bad-request")
			return
		}
		// Answer first: PairCode goes on once the bundle is stored.
		s.answer(c, iq)
		s.mu.Lock()
		lc.bundle, lc.ident = bundle, ident
		s.notifyLocked()
		s.mu.Unlock()
	default:
		s.answerError(c, iq, 400, "bad-request")
	}
}

func linkKey(code string, salt []byte) ([]byte, error) {
	return pbkdf2.Key(sha256.New, code, salt, 2<<16, 32)
}

func ctr(key, iv, data []byte) []byte {
	b, _ := aes.NewCipher(key)
	out := make([]byte, len(data))
	cipher.NewCTR(b, iv).XORKeyStream(out, data)
	return out
}

func x25519(priv *[32]byte, pub []byte) ([]byte, error) {
	k, err := ecdh.X25519().NewPrivateKey(priv[:])
	if err != nil {
		return nil, err
	}
	p, err := ecdh.X25519().NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return k.ECDH(p)
}

// PairCode plays the owner typing the pairing code the client showed
// (Client.PairPhone, e.g. "ABCD-EFGH") into their phone: it answers with
// the phone's half of the code exchange, checks the client's key bundle,
// derives the ADV secret and completes the link as PairQR does. The
// client must have asked for a code for the account's phone number.
func (s *Server) PairCode(ctx context.Context, code string) error {
	code = strings.ToUpper(strings.ReplaceAll(code, "-", ""))
	if len(code) != 8 {
		return fmt.Errorf("whatsapptest: pair code: %q is not 8 characters", code)
	}
	var c *conn
	if err := s.waitFor(ctx, "pairing code request", func() bool {
		for cc := range s.conns {
			if cc.link != nil && !cc.link.started && cc.reg != nil {
				c = cc
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	s.mu.Lock()
	lc := c.link
	lc.started = true
	s.mu.Unlock()
	if lc.phone != s.pn.User {
		return fmt.Errorf("whatsapptest: pair code: code was requested for %s, the account is %s", lc.phone, s.pn.User)
	}
	key, err := linkKey(code, lc.wrapped[:32])
	if err != nil {
		return err
	}
	companionEph := ctr(key, lc.wrapped[32:48], lc.wrapped[48:80])

	primary := keys.NewKeyPair()
	salt, iv := make([]byte, 32), make([]byte, 16)
	_, _ = rand.Read(salt)
	_, _ = rand.Read(iv)
	pkey, err := linkKey(code, salt)
	if err != nil {
		return err
	}
	wrapped := append(append(salt, iv...), ctr(pkey, iv, primary.Pub[:])...)
	phoneIdent := s.phone.dev.IdentityKey
	if err := c.send(waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": types.ServerJID, "type": "link_code_companion_reg", "id": c.newID(),
	}, Content: []waBinary.Node{{Tag: "link_code_companion_reg", Attrs: waBinary.Attrs{"stage": "primary_hello"}, Content: []waBinary.Node{
		{Tag: "link_code_pairing_ref", Content: []byte(lc.ref)},
		{Tag: "link_code_pairing_wrapped_primary_ephemeral_pub", Content: wrapped},
		{Tag: "primary_identity_pub", Content: phoneIdent.Pub[:]},
	}}}}); err != nil {
		return fmt.Errorf("whatsapptest: pair code: %w", err)
	}
	if err := s.waitFor(ctx, "companion_finish", func() bool { return lc.bundle != nil }); err != nil {
		return err
	}
	secret, err := x25519(primary.Priv, companionEph)
	if err != nil {
		return fmt.Errorf("whatsapptest: pair code: %w", err)
	}
	if len(lc.bundle) < 44 {
		return errors.New("whatsapptest: pair code: short key bundle")
	}
	bkey := hkdfutil.SHA256(secret, lc.bundle[:32], []byte("link_code_pairing_key_bundle_encryption_key"), 32)
	blk, _ := aes.NewCipher(bkey)
	gcm, _ := cipher.NewGCM(blk)
	plain, err := gcm.Open(nil, lc.bundle[32:44], lc.bundle[44:], nil)
	if err != nil || len(plain) != 96 {
		// What a mistyped code looks like to the phone.
		return errors.New("whatsapptest: pair code: key bundle does not decrypt (wrong code?)")
	}
	ident, primaryIdent, advRandom := plain[:32], plain[32:64], plain[64:]
	if string(primaryIdent) != string(phoneIdent.Pub[:]) || string(ident) != string(lc.ident) {
		return errors.New("whatsapptest: pair code: key bundle names other keys")
	}
	identShared, err := x25519(phoneIdent.Priv, ident)
	if err != nil {
		return fmt.Errorf("whatsapptest: pair code: %w", err)
	}
	adv := hkdfutil.SHA256(append(append(append([]byte(nil), secret...), identShared...), advRandom...), nil, []byte("adv_secret"), 32)
	return s.completePairing(ctx, c, [32]byte(ident), adv)
}
