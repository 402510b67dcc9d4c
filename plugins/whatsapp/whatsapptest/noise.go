package whatsapptest

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"
	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/whatsmeow/proto/waCert"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/socket"
	"go.mau.fi/whatsmeow/util/gcmutil"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// noiseState is the responder's half of Noise_XX_25519_AESGCM_SHA256 as
// WhatsApp runs it. It mirrors socket.NoiseHandshake, whose chaining key
// (salt) is unexported, so the server cannot reuse it.
type noiseState struct {
	hash    []byte
	salt    []byte
	key     cipher.AEAD
	counter uint32
}

func newNoiseState(header []byte) *noiseState {
	pattern := []byte(socket.NoiseStartPattern) // 32 bytes: used as is
	n := &noiseState{hash: pattern, salt: pattern}
	n.key = mustGCM(pattern)
	n.authenticate(header)
	return n
}

func mustGCM(key []byte) cipher.AEAD {
	g, err := gcmutil.Prepare(key)
	if err != nil {
		panic(err) // only on a key of the wrong length, which is a bug here
	}
	return g
}

func (n *noiseState) authenticate(data []byte) {
	h := sha256.Sum256(append(append([]byte(nil), n.hash...), data...))
	n.hash = h[:]
}

func iv(counter uint32) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b[8:], counter)
	return b
}

func (n *noiseState) encrypt(plaintext []byte) []byte {
	ct := n.key.Seal(nil, iv(n.counter), plaintext, n.hash)
	n.counter++
	n.authenticate(ct)
	return ct
}

func (n *noiseState) decrypt(ciphertext []byte) ([]byte, error) {
	pt, err := n.key.Open(nil, iv(n.counter), ciphertext, n.hash)
	n.counter++
	if err != nil {
		return nil, err
	}
	n.authenticate(ciphertext)
	return pt, nil
}

func expand(salt, data []byte) (first, second []byte) {
	out, err := hkdf.Key(sha256.New, data, salt, "", 64)
	if err != nil {
		panic(err) // only for lengths out of range, which is a bug here
	}
	return out[:32], out[32:]
}

func (n *noiseState) mixDH(priv, pub *[32]byte) error {
	secret, err := x25519(priv, pub[:])
	if err != nil {
		return err
	}
	n.counter = 0
	var k []byte
	n.salt, k = expand(n.salt, secret)
	n.key = mustGCM(k)
	return nil
}

// certChain is the noise certificate chain the server presents: an
// intermediate signed by the root (whose public key the client has in
// whatsmeow.WACertPubKey) and a leaf for the server's static key.
func certChain(root *keys.KeyPair, static *[32]byte) []byte {
	inter := keys.NewKeyPair()
	sign := func(k *keys.KeyPair, d *waCert.CertChain_NoiseCertificate_Details) *waCert.CertChain_NoiseCertificate {
		raw, _ := proto.Marshal(d)
		sig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*k.Priv), raw)
		return &waCert.CertChain_NoiseCertificate{Details: raw, Signature: sig[:]}
	}
	chain := &waCert.CertChain{
		Intermediate: sign(root, &waCert.CertChain_NoiseCertificate_Details{
			Serial: proto.Uint32(1), IssuerSerial: proto.Uint32(0), Key: inter.Pub[:],
		}),
		Leaf: sign(inter, &waCert.CertChain_NoiseCertificate_Details{
			Serial: proto.Uint32(2), IssuerSerial: proto.Uint32(1), Key: static[:],
		}),
	}
	raw, _ := proto.Marshal(chain)
	return raw
}

// frameConn is one client connection after the Noise handshake: frames are
// 3-byte length-prefixed inside websocket binary messages and encrypted with
// AES-GCM under per-direction counters.
type frameConn struct {
	ws *websocket.Conn

	readKey, writeKey cipher.AEAD
	readCounter       uint32

	wmu          sync.Mutex
	writeCounter uint32

	buf    []byte
	header bool // the client's 4-byte "WA" header was consumed
}

// readFrame returns the next raw (not yet decrypted) frame.
func (f *frameConn) readFrame(ctx context.Context) ([]byte, error) {
	for {
		if !f.header && len(f.buf) >= len(socket.WAConnHeader) {
			if !bytes.Equal(f.buf[:len(socket.WAConnHeader)], socket.WAConnHeader) {
				return nil, fmt.Errorf("bad connection header %x", f.buf[:4])
			}
			f.buf = f.buf[len(socket.WAConnHeader):]
			f.header = true
		}
		if f.header && len(f.buf) >= socket.FrameLengthSize {
			n := int(f.buf[0])<<16 | int(f.buf[1])<<8 | int(f.buf[2])
			if len(f.buf) >= socket.FrameLengthSize+n {
				frame := f.buf[socket.FrameLengthSize : socket.FrameLengthSize+n]
				f.buf = f.buf[socket.FrameLengthSize+n:]
				return frame, nil
			}
		}
		typ, data, err := f.ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		if typ != websocket.MessageBinary {
			continue
		}
		f.buf = append(f.buf, data...)
	}
}

func (f *frameConn) writeRaw(ctx context.Context, data []byte) error {
	frame := make([]byte, socket.FrameLengthSize+len(data))
	frame[0], frame[1], frame[2] = byte(len(data)>>16), byte(len(data)>>8), byte(len(data))
	copy(frame[socket.FrameLengthSize:], data)
	return f.ws.Write(ctx, websocket.MessageBinary, frame)
}

// handshake runs the responder side of the XX handshake and returns the
// client's static (noise) public key and its ClientPayload.
func (f *frameConn) handshake(ctx context.Context, static *keys.KeyPair, chain []byte) (*[32]byte, *waWa6.ClientPayload, error) {
	first, err := f.readFrame(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read client hello: %w", err)
	}
	var hello waWa6.HandshakeMessage
	if err := proto.Unmarshal(first, &hello); err != nil {
		return nil, nil, fmt.Errorf("parse client hello: %w", err)
	}
	ce := hello.GetClientHello().GetEphemeral()
	if len(ce) != 32 {
		return nil, nil, errors.New("client hello without ephemeral key")
	}
	clientEph := (*[32]byte)(ce)
	ns := newNoiseState(socket.WAConnHeader)
	ns.authenticate(ce)
	eph := keys.NewKeyPair()
	ns.authenticate(eph.Pub[:])
	if err := ns.mixDH(eph.Priv, clientEph); err != nil {
		return nil, nil, err
	}
	staticCT := ns.encrypt(static.Pub[:])
	if err := ns.mixDH(static.Priv, clientEph); err != nil {
		return nil, nil, err
	}
	certCT := ns.encrypt(chain)
	out, _ := proto.Marshal(&waWa6.HandshakeMessage{ServerHello: &waWa6.HandshakeMessage_ServerHello{
		Ephemeral: eph.Pub[:], Static: staticCT, Payload: certCT,
	}})
	if err := f.writeRaw(ctx, out); err != nil {
		return nil, nil, fmt.Errorf("write server hello: %w", err)
	}
	finRaw, err := f.readFrame(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read client finish: %w", err)
	}
	var fin waWa6.HandshakeMessage
	if err := proto.Unmarshal(finRaw, &fin); err != nil {
		return nil, nil, fmt.Errorf("parse client finish: %w", err)
	}
	clientStatic, err := ns.decrypt(fin.GetClientFinish().GetStatic())
	if err != nil || len(clientStatic) != 32 {
		return nil, nil, fmt.Errorf("decrypt client static: %v", err)
	}
	cs := (*[32]byte)(clientStatic)
	if err := ns.mixDH(eph.Priv, cs); err != nil {
		return nil, nil, err
	}
	payloadRaw, err := ns.decrypt(fin.GetClientFinish().GetPayload())
	if err != nil {
		return nil, nil, fmt.Errorf("decrypt client payload: %w", err)
	}
	var payload waWa6.ClientPayload
	if err := proto.Unmarshal(payloadRaw, &payload); err != nil {
		return nil, nil, fmt.Errorf("parse client payload: %w", err)
	}
	clientWrite, clientRead := expand(ns.salt, nil)
	f.readKey = mustGCM(clientWrite)
	f.writeKey = mustGCM(clientRead)
	return cs, &payload, nil
}

// readPlain returns the next decrypted frame.
func (f *frameConn) readPlain(ctx context.Context) ([]byte, error) {
	raw, err := f.readFrame(ctx)
	if err != nil {
		return nil, err
	}
	pt, err := f.readKey.Open(nil, iv(f.readCounter), raw, nil)
	f.readCounter++
	if err != nil {
		return nil, fmt.Errorf("decrypt frame: %w", err)
	}
	return pt, nil
}

// writePlain encrypts and sends one frame; safe for concurrent use.
func (f *frameConn) writePlain(ctx context.Context, plaintext []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	ct := f.writeKey.Seal(nil, iv(f.writeCounter), plaintext, nil)
	f.writeCounter++
	return f.writeRaw(ctx, ct)
}
