// Package whatsapptest is a fake WhatsApp multi-device server for tests: a
// TLS websocket server on 127.0.0.1 that speaks the real wire protocol
// (Noise_XX handshake with a certificate chain from a test root, binary
// XMPP-like nodes, Signal end-to-end encryption) well enough to drive the
// real whatsmeow client through pairing, login, messages, receipts and
// connection faults.
//
// The fake plays every party the client talks to: the server, the account
// owner's phone (which pairs the client by QR code and can write into any
// chat, "message yourself" included) and contacts, each a Signal device of
// its own (keys and sessions in the fake's own whatsmeow sqlstore, driven by
// go.mau.fi/libsignal), so what reaches the client is really encrypted and
// what the client sends is really decrypted.
//
// # What a client must set
//
// whatsmeow has no setting for its server; a client is pointed at the fake
// with exactly these three changes, which production code must only make
// behind an explicit loopback-only configuration (server_address =
// Addr(), server_root_key = RootKeyHex()):
//
//  1. whatsmeow.WACertPubKey = the 32-byte root public key (RootKeyHex,
//     hex-decoded). This is a process-wide variable; every Server of a
//     process shares one root key by default, so parallel tests agree.
//  2. cli.SetWebsocketHTTPClient(hc) and cli.SetPreLoginHTTPClient(hc) (and
//     cli.SetMediaHTTPClient(hc) for media), where hc is an *http.Client
//     whose Transport dials Addr() whatever host it is asked for
//     (DialContext ignores the address; the websocket URL stays
//     wss://web.whatsapp.com/ws/chat) and uses TLS with
//     InsecureSkipVerify: the fake's certificate is self-signed, and the
//     Noise certificate chain is what authenticates the server.
//  3. Nothing else: store, event handlers, Connect are as in production.
//
// Configure does exactly this for an in-process client; HTTPClient returns
// the client of step 2.
//
// # Coverage
//
// Pairing by QR code (PairQR plays the phone scanning it) or by phone
// number and pairing code (PairCode plays the owner typing the code the
// client got from Client.PairPhone), login with stored credentials (also
// after the client process was killed and restarted), prekey upload and
// count, usync device and LID queries, prekey bundles, group info (w:g2),
// inbound direct messages addressed by phone number or by LID, inbound group
// messages (sender-key distribution, then skmsg), messages from the owner's
// own phone (self-chat, IsFromMe), outbound direct and group messages
// (decrypted for every recipient device), delivery acks, receipts,
// redelivery of unreceipted messages on the next login, chat presence,
// stream errors (515, conflict replaced, device removed), login failures
// (401, 402, 405), dropped connections, and media both ways (media_conn,
// encrypted uploads and downloads over HTTPS on the same listener: images
// and voice notes from contacts, DownloadSent for what the client sent).
// Not covered: history sync, app state, calls, newsletters, edits and
// reactions beyond what Send carries as a raw message, retry receipts
// (recorded, not acted on).
//
// The package does not import "testing"; it can back end-to-end tests and
// manual runs alike.
package whatsapptest

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
	waLog "go.mau.fi/whatsmeow/util/log"

	_ "modernc.org/sqlite" // the fake's own Signal store
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Phone is the account's phone number without "+", default
	// "15550000001".
	Phone string
	// LID is the account's LID user part, default "100000000000001".
	LID string
	// PushName is the owner's display name, default "Owner".
	PushName string
	// RootKey, when set, is the private key of the certificate root;
	// default: one key generated per process and shared by every Server.
	RootKey *[32]byte
	// Dir holds the fake's own Signal store; default a temporary
	// directory removed by Close.
	Dir string
	// Logger receives the nodes exchanged (Debug) and protocol problems
	// (Warn); default: discarded.
	Logger *slog.Logger
}

var processRoot = sync.OnceValue(keys.NewKeyPair)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	log    *slog.Logger
	root   *keys.KeyPair
	static *keys.KeyPair
	chain  []byte
	http   *httptest.Server
	ctx    context.Context
	cancel context.CancelFunc
	dir    string
	rmDir  bool
	store  *sqlstore.Container

	pn, lid types.JID // the account, non-AD
	name    string

	cryptoMu sync.Mutex // the fake's Signal store: one operation at a time
	phone    *party     // the owner's phone, device 0

	deliverMu sync.Mutex // orders what is written to the logged-in conn

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every state change
	conns    map[*conn]struct{}
	current  *conn // logged in
	device   *device
	nextDev  uint16
	contacts map[string]*Contact // by phone number and by LID user
	groups   map[string]*Group   // by JID string
	skdmSent map[string]bool     // group|sender|device → distribution delivered
	inbound  []*inbound
	sent     []SentMessage
	receipts []Receipt
	chat     []ChatPresence
	presence []Presence
	iqs      []IQ
	failure  *Failure
	logins   int
	events   []ConnEvent
	blobs    map[string][]byte // media by path
	// mediaHost is the host media_conn announces (SetMediaHost).
	mediaHost string
	// mediaGets and mediaServed count the media downloads and the bytes
	// their answers wrote (MediaDownloads).
	mediaGets   int
	mediaServed int64
}

// New starts a fake WhatsApp server on 127.0.0.1 with an ephemeral port.
// Close it when done.
func New(opts Options) (*Server, error) {
	if opts.Phone == "" {
		opts.Phone = "15550000001"
	}
	if opts.LID == "" {
		opts.LID = "100000000000001"
	}
	if opts.PushName == "" {
		opts.PushName = "Owner"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	root := processRoot()
	if opts.RootKey != nil {
		root = keys.NewKeyPairFromPrivateKey(*opts.RootKey)
	}
	s := &Server{
		log:      log,
		root:     root,
		static:   keys.NewKeyPair(),
		pn:       types.NewJID(opts.Phone, types.DefaultUserServer),
		lid:      types.NewJID(opts.LID, types.HiddenUserServer),
		name:     opts.PushName,
		changed:  make(chan struct{}),
		conns:    map[*conn]struct{}{},
		nextDev:  1,
		contacts: map[string]*Contact{},
		groups:   map[string]*Group{},
		skdmSent: map[string]bool{},
		blobs:    map[string][]byte{},

		mediaHost: defaultMediaHost,
	}
	s.chain = certChain(root, s.static.Pub)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.dir = opts.Dir
	if s.dir == "" {
		d, err := os.MkdirTemp("", "whatsapptest-")
		if err != nil {
			return nil, fmt.Errorf("whatsapptest: %w", err)
		}
		s.dir, s.rmDir = d, true
	}
	if err := s.openStore(); err != nil {
		s.cleanup()
		return nil, err
	}
	phone, err := newParty(s.ctx, s.store, s.pn, s.lid, s.name, nil)
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("whatsapptest: %w", err)
	}
	s.phone = phone

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("whatsapptest: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/chat", s.serveWS)
	mux.HandleFunc("/", s.serveMedia)
	s.http = httptest.NewUnstartedServer(mux)
	s.http.Listener.Close()
	s.http.Listener = ln
	s.http.StartTLS()
	return s, nil
}

func (s *Server) openStore() error {
	dsn := "file:" + filepath.Join(s.dir, "parties.db") +
		"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	c, err := sqlstore.New(s.ctx, "sqlite", dsn, waLog.Noop)
	if err != nil {
		return fmt.Errorf("whatsapptest: open store: %w", err)
	}
	s.store = c
	return nil
}

func (s *Server) cleanup() {
	s.cancel()
	if s.store != nil {
		_ = s.store.Close()
	}
	if s.rmDir {
		_ = os.RemoveAll(s.dir)
	}
}

// Close drops every connection and shuts the server down.
func (s *Server) Close() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.closeNow()
	}
	s.http.CloseClientConnections()
	s.http.Close()
	s.cryptoMu.Lock()
	s.cleanup()
	s.cryptoMu.Unlock()
}

// Addr is the listener's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.http.Listener.Addr().String() }

// RootKey is the public key of the certificate root, the value of
// whatsmeow.WACertPubKey for clients of this server.
func (s *Server) RootKey() [32]byte { return *s.root.Pub }

// RootKeyHex is RootKey in lowercase hex (64 characters).
func (s *Server) RootKeyHex() string { return hex.EncodeToString(s.root.Pub[:]) }

// JID is the account's phone-number JID, e.g. 15550000001@s.whatsapp.net.
func (s *Server) JID() types.JID { return s.pn }

// LID is the account's LID, e.g. 100000000000001@lid.
func (s *Server) LID() types.JID { return s.lid }

// HTTPClient returns an http.Client that reaches this server whatever URL
// it is given: TLS to Addr() without certificate verification.
func (s *Server) HTTPClient() *http.Client {
	return NewHTTPClient(s.Addr())
}

// NewHTTPClient is the http.Client a whatsmeow client needs to reach a fake
// at addr (see the package doc): every dial goes to addr, TLS without
// certificate verification, HTTP/1.1.
func NewHTTPClient(addr string) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		},
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback test server
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}

var rootKeyMu sync.Mutex

// SetRootKey installs key as whatsmeow.WACertPubKey. The variable is
// process-wide: it is written only when it differs, so clients of servers
// sharing the default root key can connect concurrently.
func SetRootKey(key [32]byte) {
	rootKeyMu.Lock()
	defer rootKeyMu.Unlock()
	if whatsmeow.WACertPubKey != key {
		whatsmeow.WACertPubKey = key
	}
}

// Configure points an in-process whatsmeow client at this server: it
// installs the root key and sets the websocket, pre-login and media HTTP
// clients. Call it before cli.Connect.
func (s *Server) Configure(cli *whatsmeow.Client) {
	SetRootKey(s.RootKey())
	hc := s.HTTPClient()
	cli.SetWebsocketHTTPClient(hc)
	cli.SetPreLoginHTTPClient(hc)
	cli.SetMediaHTTPClient(hc)
}

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor waits until cond (called with s.mu held) is true.
func (s *Server) waitFor(ctx context.Context, what string, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("whatsapptest: wait for %s: %w", what, ctx.Err())
		case <-s.ctx.Done():
			return errors.New("whatsapptest: server closed")
		case <-ch:
		}
	}
}

// Connected reports whether a linked device is logged in (it got
// <success> and announced itself active).
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current != nil && s.current.active
}

// WaitLoggedIn waits until a linked device is logged in and active.
func (s *Server) WaitLoggedIn(ctx context.Context) error {
	return s.waitFor(ctx, "login", func() bool { return s.current != nil && s.current.active })
}

// Logins is the number of successful logins so far.
func (s *Server) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// WaitLogins waits until at least n logins succeeded and the latest
// connection is active.
func (s *Server) WaitLogins(ctx context.Context, n int) error {
	return s.waitFor(ctx, fmt.Sprintf("%d logins", n), func() bool {
		return s.logins >= n && s.current != nil && s.current.active
	})
}

// Device is the linked device's JIDs, ok false before pairing.
func (s *Server) Device() (pn, lid types.JID, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.device == nil {
		return types.EmptyJID, types.EmptyJID, false
	}
	return s.devicePN(s.device), s.deviceLID(s.device), true
}

func (s *Server) devicePN(d *device) types.JID {
	return types.JID{User: s.pn.User, Device: d.id, Server: types.DefaultUserServer}
}

func (s *Server) deviceLID(d *device) types.JID {
	return types.JID{User: s.lid.User, Device: d.id, Server: types.HiddenUserServer}
}

// ConnEventKind is what happened to a connection.
type ConnEventKind string

// Connection events.
const (
	// EventConnected: a client completed the Noise handshake.
	EventConnected ConnEventKind = "connected"
	// EventLoggedIn: a client logged in with stored credentials.
	EventLoggedIn ConnEventKind = "logged_in"
	// EventLoginRefused: a login was answered with <failure>.
	EventLoginRefused ConnEventKind = "login_refused"
	// EventPaired: a client was linked by PairQR.
	EventPaired ConnEventKind = "paired"
	// EventClosed: a connection ended.
	EventClosed ConnEventKind = "closed"
)

// ConnEvent is one entry of the connection log.
type ConnEvent struct {
	Kind ConnEventKind
	// Detail is the device id for logins and pairings, the failure
	// reason for refused logins, else "".
	Detail string
	// Time is when it happened.
	Time time.Time
}

// Events returns the connection log.
func (s *Server) Events() []ConnEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ConnEvent(nil), s.events...)
}

// WaitEvent waits for a connection event of kind, counting from index from
// of Events(), and returns its index.
func (s *Server) WaitEvent(ctx context.Context, from int, kind ConnEventKind) (int, error) {
	idx := -1
	err := s.waitFor(ctx, string(kind), func() bool {
		for i := from; i < len(s.events); i++ {
			if s.events[i].Kind == kind {
				idx = i
				return true
			}
		}
		return false
	})
	return idx, err
}

func (s *Server) eventLocked(kind ConnEventKind, detail string) {
	s.events = append(s.events, ConnEvent{Kind: kind, Detail: detail, Time: time.Now()})
	s.notifyLocked()
}
