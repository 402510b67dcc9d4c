package whatsapptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/libsignal/groups"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/protocol"
	"go.mau.fi/libsignal/session"
	"go.mau.fi/libsignal/util/optional"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

var serializer = store.SignalProtobufSerializer

// party is one simulated Signal device on the fake's side: a contact's
// phone or the account owner's own phone. Its keys and sessions live in a
// store.Device of the fake's own sqlstore, driven by go.mau.fi/libsignal,
// so that what it sends is really end-to-end encrypted. All calls happen
// under Server.cryptoMu.
type party struct {
	pn, lid types.JID // device 0, non-AD
	name    string
	dev     *store.Device
}

func newParty(ctx context.Context, c *sqlstore.Container, pn, lid types.JID, name string, identityKey *keys.KeyPair) (*party, error) {
	dev := c.NewDevice()
	if identityKey != nil {
		dev.IdentityKey = identityKey
		dev.SignedPreKey = identityKey.CreateSignedPreKey(1)
	}
	id := pn
	dev.ID = &id
	dev.LID = lid
	dev.PushName = name
	// The sqlstore wants an ADV identity for every device; parties never
	// present theirs, so any well-formed filler does.
	dev.Account = &waAdv.ADVSignedDeviceIdentity{
		Details:             []byte{0},
		AccountSignatureKey: dev.IdentityKey.Pub[:],
		AccountSignature:    make([]byte, 64),
		DeviceSignature:     make([]byte, 64),
	}
	if err := c.PutDevice(ctx, dev); err != nil {
		return nil, fmt.Errorf("store party %s: %w", pn, err)
	}
	return &party{pn: pn, lid: lid, name: name, dev: dev}, nil
}

// bundleNode is the <user> node of an encrypt/key answer for this party's
// device 0, with a fresh one-time prekey.
func (p *party) bundleNode(ctx context.Context, jid types.JID) (waBinary.Node, error) {
	pk, err := p.dev.PreKeys.GenOnePreKey(ctx)
	if err != nil {
		return waBinary.Node{}, fmt.Errorf("generate prekey: %w", err)
	}
	return bundleNode(jid, p.dev.RegistrationID, p.dev.IdentityKey.Pub, p.dev.SignedPreKey, &pk.KeyPair, pk.KeyID), nil
}

func bundleNode(jid types.JID, regID uint32, ident *[32]byte, spk *keys.PreKey, pk *keys.KeyPair, pkID uint32) waBinary.Node {
	reg := make([]byte, 4)
	binary.BigEndian.PutUint32(reg, regID)
	keyID := func(id uint32) []byte {
		b := make([]byte, 4)
		binary.BigEndian.PutUint32(b, id)
		return b[1:]
	}
	content := []waBinary.Node{
		{Tag: "registration", Content: reg},
		{Tag: "type", Content: []byte{ecc.DjbType}},
		{Tag: "identity", Content: ident[:]},
		{Tag: "skey", Content: []waBinary.Node{
			{Tag: "id", Content: keyID(spk.KeyID)},
			{Tag: "value", Content: spk.Pub[:]},
			{Tag: "signature", Content: spk.Signature[:]},
		}},
	}
	if pk != nil {
		content = append(content, waBinary.Node{Tag: "key", Content: []waBinary.Node{
			{Tag: "id", Content: keyID(pkID)},
			{Tag: "value", Content: pk.Pub[:]},
		}})
	}
	return waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": jid}, Content: content}
}

// encrypt encrypts padded plaintext for the device at addr, starting a
// session from bundle() when there is none yet. It returns "pkmsg" or "msg".
func (p *party) encrypt(ctx context.Context, addr *protocol.SignalAddress, bundle func() (*prekey.Bundle, error), plaintext []byte) (string, []byte, error) {
	builder := session.NewBuilderFromSignal(p.dev, addr, serializer)
	has, err := p.dev.ContainsSession(ctx, addr)
	if err != nil {
		return "", nil, err
	}
	if !has {
		b, err := bundle()
		if err != nil {
			return "", nil, err
		}
		if err := builder.ProcessBundle(ctx, b); err != nil {
			return "", nil, fmt.Errorf("process bundle of %s: %w", addr, err)
		}
	}
	ct, err := session.NewCipher(builder, addr).Encrypt(ctx, pad(plaintext))
	if err != nil {
		return "", nil, fmt.Errorf("encrypt for %s: %w", addr, err)
	}
	typ := "msg"
	if ct.Type() == protocol.PREKEY_TYPE {
		typ = "pkmsg"
	}
	return typ, ct.Serialize(), nil
}

// decrypt decrypts a pkmsg or msg the device at addr sent to this party.
func (p *party) decrypt(ctx context.Context, addr *protocol.SignalAddress, typ string, content []byte) ([]byte, error) {
	builder := session.NewBuilderFromSignal(p.dev, addr, serializer)
	cipher := session.NewCipher(builder, addr)
	var pt []byte
	switch typ {
	case "pkmsg":
		msg, err := protocol.NewPreKeySignalMessageFromBytes(content, serializer.PreKeySignalMessage, serializer.SignalMessage)
		if err != nil {
			return nil, err
		}
		if pt, err = cipher.DecryptMessage(ctx, msg); err != nil {
			return nil, err
		}
	case "msg":
		msg, err := protocol.NewSignalMessageFromBytes(content, serializer.SignalMessage)
		if err != nil {
			return nil, err
		}
		if pt, err = cipher.Decrypt(ctx, msg); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown enc type %q", typ)
	}
	return unpad(pt)
}

func senderKeyName(group types.JID, sender *protocol.SignalAddress) *protocol.SenderKeyName {
	return protocol.NewSenderKeyName(group.String(), sender)
}

// groupDistribution returns this party's sender key distribution message
// for group, creating the sender key on first use.
func (p *party) groupDistribution(ctx context.Context, group types.JID) ([]byte, error) {
	b := groups.NewGroupSessionBuilder(p.dev, serializer)
	skdm, err := b.Create(ctx, senderKeyName(group, p.lid.SignalAddress()))
	if err != nil {
		return nil, err
	}
	return skdm.Serialize(), nil
}

func (p *party) groupEncrypt(ctx context.Context, group types.JID, plaintext []byte) ([]byte, error) {
	b := groups.NewGroupSessionBuilder(p.dev, serializer)
	name := senderKeyName(group, p.lid.SignalAddress())
	ct, err := groups.NewGroupCipher(b, name, p.dev).Encrypt(ctx, pad(plaintext))
	if err != nil {
		return nil, err
	}
	return ct.SignedSerialize(), nil
}

func (p *party) groupProcess(ctx context.Context, group types.JID, sender *protocol.SignalAddress, skdm []byte) error {
	msg, err := protocol.NewSenderKeyDistributionMessageFromBytes(skdm, serializer.SenderKeyDistributionMessage)
	if err != nil {
		return err
	}
	return groups.NewGroupSessionBuilder(p.dev, serializer).Process(ctx, senderKeyName(group, sender), msg)
}

func (p *party) groupDecrypt(ctx context.Context, group types.JID, sender *protocol.SignalAddress, content []byte) ([]byte, error) {
	msg, err := protocol.NewSenderKeyMessageFromBytes(content, serializer.SenderKeyMessage)
	if err != nil {
		return nil, err
	}
	b := groups.NewGroupSessionBuilder(p.dev, serializer)
	pt, err := groups.NewGroupCipher(b, senderKeyName(group, sender), p.dev).Decrypt(ctx, msg)
	if err != nil {
		return nil, err
	}
	return unpad(pt)
}

// pad appends WhatsApp's random padding (1–15 bytes of the pad length).
func pad(b []byte) []byte {
	var r [1]byte
	_, _ = rand.Read(r[:])
	n := r[0] & 0xf
	if n == 0 {
		n = 0xf
	}
	return append(append([]byte(nil), b...), bytes.Repeat([]byte{n}, int(n))...)
}

func unpad(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errors.New("empty plaintext")
	}
	n := int(b[len(b)-1])
	if n == 0 || n > len(b) || !bytes.Equal(b[len(b)-n:], bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, errors.New("bad padding")
	}
	return b[:len(b)-n], nil
}

// companionBundle is the prekey bundle of the linked device, built from
// what it registered and uploaded.
func companionBundle(d *device, withPreKey *keys.PreKey) *prekey.Bundle {
	pkID := optional.NewEmptyUint32()
	var pkPub ecc.ECPublicKeyable
	if withPreKey != nil {
		pkID = optional.NewOptionalUint32(withPreKey.KeyID)
		pkPub = ecc.NewDjbECPublicKey(*withPreKey.Pub)
	}
	return prekey.NewBundle(d.regID, uint32(d.id), pkID, d.signedPreKey.KeyID,
		pkPub, ecc.NewDjbECPublicKey(*d.signedPreKey.Pub), *d.signedPreKey.Signature,
		identity.NewKey(ecc.NewDjbECPublicKey(d.identity)))
}
