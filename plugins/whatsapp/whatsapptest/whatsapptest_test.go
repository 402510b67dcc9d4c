package whatsapptest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
)

const testTimeout = 30 * time.Second

// tlog sends whatsmeow's warnings and errors to the test log.
type tlog struct {
	t      testing.TB
	module string
}

func (l tlog) Warnf(msg string, args ...any)  { l.logf("WARN", msg, args...) }
func (l tlog) Errorf(msg string, args ...any) { l.logf("ERROR", msg, args...) }
func (l tlog) Infof(string, ...any)           {}
func (l tlog) Debugf(string, ...any)          {}
func (l tlog) Sub(m string) waLog.Logger      { return tlog{l.t, l.module + "/" + m} }
func (l tlog) logf(level, msg string, args ...any) {
	l.t.Helper()
	l.t.Logf("%s %s: %s", level, l.module, fmt.Sprintf(msg, args...))
}

// client is a real whatsmeow client with its sqlstore in a file, set up as
// the plugin does (synchronous acks, decrypted-event buffer).
type client struct {
	t   *testing.T
	cli *whatsmeow.Client
	db  *sqlstore.Container

	mu      sync.Mutex
	events  []any
	changed chan struct{}
	// refuse, when set, makes the handler fail for matching messages (no
	// receipt is sent for them).
	refuse func(*events.Message) bool
}

func newServer(t *testing.T) *whatsapptest.Server {
	t.Helper()
	var opts whatsapptest.Options
	if os.Getenv("WA_DEBUG") != "" { // the nodes exchanged, on stderr
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := whatsapptest.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func newClient(t *testing.T, srv *whatsapptest.Server, path string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sqlstore.New(ctx, "sqlite", dsn, waLog.Noop)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := db.GetFirstDevice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, db: db, changed: make(chan struct{})}
	c.cli = whatsmeow.NewClient(dev, tlog{t, "client"})
	c.cli.SynchronousAck = true
	c.cli.EnableDecryptedEventBuffer = true
	c.cli.ManualHistorySyncDownload = true
	srv.Configure(c.cli)
	c.cli.AddEventHandlerWithSuccessStatus(c.handle)
	t.Cleanup(c.stop)
	return c
}

func (c *client) stop() {
	c.cli.Disconnect()
	_ = c.db.Close()
}

func (c *client) handle(evt any) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, evt)
	close(c.changed)
	c.changed = make(chan struct{})
	if m, ok := evt.(*events.Message); ok && c.refuse != nil && c.refuse(m) {
		return false
	}
	return true
}

func (c *client) setRefuse(f func(*events.Message) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuse = f
}

// waitEvent waits for an event of type T matching match, counting from the
// n-th event, and returns it with its index.
func waitEvent[T any](t *testing.T, c *client, from int, match func(T) bool) (T, int) {
	t.Helper()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if e, ok := c.events[i].(T); ok && (match == nil || match(e)) {
				c.mu.Unlock()
				return e, i
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			var zero T
			t.Fatalf("timed out waiting for %T", zero)
			return zero, -1
		}
	}
}

// connect connects the client to the server.
func (c *client) connect() {
	c.t.Helper()
	if err := c.cli.Connect(); err != nil {
		c.t.Fatal(err)
	}
}

// unpaired connects a client with an empty store and waits for its first
// QR code.
func unpaired(t *testing.T, srv *whatsapptest.Server) (*client, *events.QR, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wa.db")
	c := newClient(t, srv, path)
	c.connect()
	qr, _ := waitEvent[*events.QR](t, c, 0, nil)
	return c, qr, path
}

// receive calls send (a contact or the phone sending a message, returning
// its id) and waits for the next message event for which match, given
// the id, is true (nil: the next message event).
func (c *client) receive(send func() (string, error), match func(m *events.Message, id string) bool) (*events.Message, string) {
	c.t.Helper()
	from := c.count()
	id, err := send()
	if err != nil {
		c.t.Fatal(err)
	}
	var f func(*events.Message) bool
	if match != nil {
		f = func(m *events.Message) bool { return match(m, id) }
	}
	m, _ := waitEvent[*events.Message](c.t, c, from, f)
	return m, id
}

// sameID matches the message event of the message sent.
func sameID(m *events.Message, id string) bool { return m.Info.ID == id }

// send sends msg to to and returns what the server got.
func (c *client) send(ctx context.Context, srv *whatsapptest.Server, to types.JID, msg *waE2E.Message) whatsapptest.SentMessage {
	c.t.Helper()
	resp, err := c.cli.SendMessage(ctx, to, msg)
	if err != nil {
		c.t.Fatal(err)
	}
	sm, err := srv.WaitSent(ctx, func(m whatsapptest.SentMessage) bool { return m.ID == resp.ID })
	if err != nil {
		c.t.Fatal(err)
	}
	return sm
}

func (c *client) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// pair links a fresh client by QR code and waits until it is logged in.
func pair(t *testing.T, srv *whatsapptest.Server) (*client, string) {
	t.Helper()
	c, qr, path := unpaired(t, srv)
	if err := srv.PairQR(ctxT(t), qr.Codes[0]); err != nil {
		t.Fatal(err)
	}
	ps, _ := waitEvent[*events.PairSuccess](t, c, 0, nil)
	pn, lid, ok := srv.Device()
	if !ok || ps.ID != pn || ps.LID != lid {
		t.Fatalf("PairSuccess %v/%v, server device %v/%v", ps.ID, ps.LID, pn, lid)
	}
	waitEvent[*events.Connected](t, c, 0, nil)
	if err := srv.WaitLoggedIn(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return c, path
}

// wireFromConfig does what a client configured with server_address and
// server_root_key must do (see the package doc).
func wireFromConfig(t *testing.T, cli *whatsmeow.Client, addr, rootHex string) {
	t.Helper()
	key, err := hex.DecodeString(rootHex)
	if err != nil || len(key) != 32 {
		t.Fatalf("root key %q: %v", rootHex, err)
	}
	whatsapptest.SetRootKey([32]byte(key))
	hc := whatsapptest.NewHTTPClient(addr)
	cli.SetWebsocketHTTPClient(hc)
	cli.SetPreLoginHTTPClient(hc)
	cli.SetMediaHTTPClient(hc)
}

// pairedWithAlice is a server, a client paired to it (its store at path)
// and the contact Alice.
func pairedWithAlice(t *testing.T) (srv *whatsapptest.Server, c *client, path string, alice *whatsapptest.Contact) {
	t.Helper()
	srv = newServer(t)
	c, path = pair(t, srv)
	return srv, c, path, addContact(t, srv, "15550001111", "200000000000001", "Alice")
}

func addContact(t *testing.T, srv *whatsapptest.Server, phone, lid, name string) *whatsapptest.Contact {
	t.Helper()
	ct, err := srv.AddContact(whatsapptest.ContactOptions{Phone: phone, LID: lid, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func textOf(m *events.Message) string {
	if s := m.Message.GetConversation(); s != "" {
		return s
	}
	return m.Message.GetExtendedTextMessage().GetText()
}

func TestPairThenLogin(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c, _ := pair(t, srv)
	if !srv.Connected() || srv.Logins() != 1 {
		t.Fatalf("connected %v logins %d", srv.Connected(), srv.Logins())
	}
	if got := c.cli.Store.GetJID(); got.User != srv.JID().User || got.Device == 0 {
		t.Fatalf("client JID %v", got)
	}
	if got := c.cli.Store.GetLID(); got.User != srv.LID().User {
		t.Fatalf("client LID %v", got)
	}
	if n := len(srv.IQs()); n == 0 {
		t.Fatal("no IQs recorded")
	}
}

func TestLoginAfterRestartWithoutQR(t *testing.T) {
	t.Parallel()
	srv, c, path, ct := pairedWithAlice(t)
	c.stop()
	// While the client is down a message arrives; it is delivered on login.
	id, err := ct.SendText(ctxT(t), whatsapptest.TextOptions{Text: "while you were away"})
	if err != nil {
		t.Fatal(err)
	}
	// The restarted client is wired from the two config values only, as
	// the plugin process is.
	c2 := newClient(t, srv, path)
	wireFromConfig(t, c2.cli, srv.Addr(), srv.RootKeyHex())
	c2.connect()
	waitEvent[*events.Connected](t, c2, 0, nil)
	m, _ := waitEvent[*events.Message](t, c2, 0, nil)
	if m.Info.ID != id || textOf(m) != "while you were away" {
		t.Fatalf("got %s %q", m.Info.ID, textOf(m))
	}
	for _, e := range c2.events {
		if _, ok := e.(*events.QR); ok {
			t.Fatal("QR event after restart")
		}
	}
	if err := srv.WaitLogins(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
}

func TestDirectMessagesIn(t *testing.T) {
	t.Parallel()
	srv, c, _, ct := pairedWithAlice(t)
	for _, tc := range []struct {
		name string
		lid  bool
	}{{"phone-number", false}, {"lid", true}, {"phone-number-again", false}} {
		m, id := c.receive(func() (string, error) {
			return ct.SendText(ctxT(t), whatsapptest.TextOptions{Text: "hi " + tc.name, LIDAddressed: tc.lid})
		}, nil)
		if m.Info.ID != id || textOf(m) != "hi "+tc.name || m.Info.IsFromMe || m.Info.PushName != "Alice" {
			t.Fatalf("%s: got %+v %q", tc.name, m.Info, textOf(m))
		}
		wantSender, wantAlt := ct.JID(), ct.LID()
		if tc.lid {
			wantSender, wantAlt = ct.LID(), ct.JID()
		}
		if m.Info.Sender != wantSender || m.Info.SenderAlt != wantAlt || m.Info.Chat != wantSender {
			t.Fatalf("%s: sender %v alt %v chat %v", tc.name, m.Info.Sender, m.Info.SenderAlt, m.Info.Chat)
		}
		r, err := srv.WaitReceipt(ctxT(t), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != "inactive" && r.Type != "" {
			t.Fatalf("receipt type %q", r.Type)
		}
	}
	if p := srv.Pending(); len(p) != 0 {
		t.Fatalf("pending %v", p)
	}
}

func TestDirectMessagesOut(t *testing.T) {
	t.Parallel()
	srv, c, _, ct := pairedWithAlice(t)
	ctx := ctxT(t)
	// Client writes first: it fetches the contact's prekey bundle.
	sm := c.send(ctx, srv, ct.JID(), &waE2E.Message{Conversation: proto.String("hello Alice")})
	if sm.Text() != "hello Alice" || sm.To != ct.JID() || len(sm.Errors) != 0 {
		t.Fatalf("sent %+v", sm)
	}
	if !slices.Contains(sm.Recipients, ct.JID()) || !slices.Contains(sm.Recipients, srv.JID()) {
		t.Fatalf("recipients %v", sm.Recipients)
	}
	// The contact answers on the session the client started, then the
	// client replies quoting it, to the LID this time.
	in, id := c.receive(func() (string, error) { return ct.SendText(ctx, whatsapptest.TextOptions{Text: "hi back"}) }, nil)
	if textOf(in) != "hi back" {
		t.Fatalf("got %q", textOf(in))
	}
	reply := &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
		Text: proto.String("quoting you"),
		ContextInfo: &waE2E.ContextInfo{
			StanzaID: proto.String(id), Participant: proto.String(ct.JID().String()),
			QuotedMessage: &waE2E.Message{Conversation: proto.String("hi back")},
		},
	}}
	sm = c.send(ctx, srv, ct.LID(), reply)
	if sm.Text() != "quoting you" || sm.QuotedID() != id || sm.To != ct.LID() || len(sm.Errors) != 0 {
		t.Fatalf("sent %+v errors %v", sm, sm.Errors)
	}
	// Alice's phone confirms delivery and reading.
	from := c.count()
	if err := ct.SendReceipt(ctx, whatsapptest.ReceiptOptions{IDs: []string{sm.ID}, Type: "read"}); err != nil {
		t.Fatal(err)
	}
	rc, _ := waitEvent[*events.Receipt](t, c, from, nil)
	if rc.Type != types.ReceiptTypeRead || !slices.Equal(rc.MessageIDs, []string{sm.ID}) || rc.Sender != ct.JID() {
		t.Fatalf("receipt %+v", rc)
	}
	// Nothing the client sent came back to it as a message.
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if m, ok := e.(*events.Message); ok && m.Info.IsFromMe {
			t.Fatalf("own message echoed: %+v", m.Info)
		}
	}
}

func TestGroupMessages(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c, _ := pair(t, srv)
	alice := addContact(t, srv, "15550001111", "200000000000001", "Alice")
	bob := addContact(t, srv, "15550002222", "200000000000002", "Bob")
	g, err := srv.AddGroup(whatsapptest.GroupOptions{ID: "120363000000000001", Name: "Crew", Members: []*whatsapptest.Contact{alice, bob}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for i, text := range []string{"first in group", "second in group"} {
		m, id := c.receive(func() (string, error) {
			return alice.SendGroupText(ctx, g, whatsapptest.TextOptions{Text: text, Mentions: []types.JID{srv.LID()}})
		}, func(m *events.Message, _ string) bool { return textOf(m) != "" })
		if m.Info.ID != id || textOf(m) != text || m.Info.Chat != g.JID() || m.Info.Sender != alice.LID() || m.Info.SenderAlt != alice.JID() {
			t.Fatalf("%d: got %+v %q", i, m.Info, textOf(m))
		}
		if got := m.Message.GetExtendedTextMessage().GetContextInfo().GetMentionedJID(); !slices.Equal(got, []string{srv.LID().String()}) {
			t.Fatalf("mentions %v", got)
		}
		if _, err := srv.WaitReceipt(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	sm := c.send(ctx, srv, g.JID(), &waE2E.Message{Conversation: proto.String("hello crew")})
	if sm.Text() != "hello crew" || sm.To != g.JID() || len(sm.Errors) != 0 {
		t.Fatalf("sent %+v", sm)
	}
	for _, want := range []types.JID{alice.LID(), bob.LID(), srv.LID()} {
		if !slices.Contains(sm.Recipients, want) {
			t.Fatalf("recipients %v lack %v", sm.Recipients, want)
		}
	}
	// A second send uses the sender key already distributed.
	sm = c.send(ctx, srv, g.JID(), &waE2E.Message{Conversation: proto.String("again")})
	if sm.Text() != "again" || len(sm.Errors) != 0 {
		t.Fatalf("sent %+v", sm)
	}
}

func TestRedeliveryAfterFailedHandler(t *testing.T) {
	t.Parallel()
	srv, c, path, ct := pairedWithAlice(t)
	ctx := ctxT(t)
	c.setRefuse(func(*events.Message) bool { return true })
	_, id := c.receive(func() (string, error) { return ct.SendText(ctx, whatsapptest.TextOptions{Text: "store me"}) }, sameID)
	// The handler failed: no receipt, the message stays pending. (A
	// receipt would have been sent synchronously before the next node.)
	if !slices.Contains(srv.Pending(), id) {
		t.Fatalf("pending %v", srv.Pending())
	}
	c.stop()
	for _, r := range srv.Receipts() {
		if r.ID == id {
			t.Fatalf("receipt for refused message: %+v", r)
		}
	}
	c2 := newClient(t, srv, path)
	c2.connect()
	m, _ := waitEvent[*events.Message](t, c2, 0, nil)
	if m.Info.ID != id || textOf(m) != "store me" {
		t.Fatalf("redelivered %s %q", m.Info.ID, textOf(m))
	}
	if _, err := srv.WaitReceipt(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// TestServerEvents: what the server does to a logged-in client's
// connection, and what the client sees of it.
func TestServerEvents(t *testing.T) {
	t.Parallel()
	relogin := func(t *testing.T, srv *whatsapptest.Server) {
		if err := srv.WaitLogins(ctxT(t), 2); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(t *testing.T, srv *whatsapptest.Server) {
		if _, err := srv.WaitEvent(ctxT(t), 0, whatsapptest.EventLoginRefused); err != nil {
			t.Fatal(err)
		}
	}
	failure := func(f whatsapptest.Failure) func(*whatsapptest.Server) error {
		return func(srv *whatsapptest.Server) error {
			srv.SetFailure(f)
			return srv.DropConnection()
		}
	}
	for _, tc := range []struct {
		name string
		do   func(srv *whatsapptest.Server) error
		// seen waits for what the client sees, counting from its event from.
		seen func(t *testing.T, c *client, from int)
		// then checks the server after.
		then func(t *testing.T, srv *whatsapptest.Server)
	}{
		{"stream-error-515-reconnects", func(srv *whatsapptest.Server) error { return srv.StreamError("515") }, func(t *testing.T, c *client, from int) {
			waitEvent[*events.Connected](t, c, from, nil)
		}, relogin},
		{"dropped-connection-reconnects", (*whatsapptest.Server).DropConnection, func(t *testing.T, c *client, from int) {
			_, i := waitEvent[*events.Disconnected](t, c, from, nil)
			waitEvent[*events.Connected](t, c, i, nil)
		}, relogin},
		{"login-failure-logged-out", failure(whatsapptest.Failure{Reason: whatsapptest.FailureLoggedOut}), func(t *testing.T, c *client, from int) {
			e, _ := waitEvent[*events.LoggedOut](t, c, from, nil)
			if !e.OnConnect || e.Reason != events.ConnectFailureLoggedOut {
				t.Fatalf("%+v", e)
			}
		}, refused},
		{"login-failure-temp-ban", failure(whatsapptest.Failure{Reason: whatsapptest.FailureTempBanned, Code: 101, Expire: time.Hour}), func(t *testing.T, c *client, from int) {
			e, _ := waitEvent[*events.TemporaryBan](t, c, from, nil)
			if e.Code != 101 || e.Expire != time.Hour {
				t.Fatalf("%+v", e)
			}
		}, refused},
		{"login-failure-client-outdated", failure(whatsapptest.Failure{Reason: whatsapptest.FailureClientOutdated}), func(t *testing.T, c *client, from int) {
			waitEvent[*events.ClientOutdated](t, c, from, nil)
		}, refused},
		{"stream-replaced", (*whatsapptest.Server).StreamReplaced, func(t *testing.T, c *client, from int) {
			waitEvent[*events.StreamReplaced](t, c, from, nil)
		}, nil},
		{"device-removed", func(srv *whatsapptest.Server) error { srv.RemoveDevice(); return nil }, func(t *testing.T, c *client, from int) {
			e, _ := waitEvent[*events.LoggedOut](t, c, from, nil)
			if e.OnConnect {
				t.Fatalf("%+v", e)
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c, _ := pair(t, srv)
			from := c.count()
			if err := tc.do(srv); err != nil {
				t.Fatal(err)
			}
			tc.seen(t, c, from)
			if tc.then != nil {
				tc.then(t, srv)
			}
		})
	}
}

func TestChatPresence(t *testing.T) {
	t.Parallel()
	srv, c, _, ct := pairedWithAlice(t)
	ctx := ctxT(t)
	for _, st := range []types.ChatPresence{types.ChatPresenceComposing, types.ChatPresencePaused} {
		if err := c.cli.SendChatPresence(ctx, ct.JID(), st, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.WaitChatPresence(ctx, func(p whatsapptest.ChatPresence) bool {
			return p.To == ct.JID() && p.State == string(st)
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSelfChat(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c, _ := pair(t, srv)
	ctx := ctxT(t)
	// The owner writes into "message yourself" on the phone.
	m, id := c.receive(func() (string, error) {
		return srv.PhoneSendText(ctx, srv.JID(), whatsapptest.TextOptions{Text: "note to self"})
	}, nil)
	if m.Info.ID != id || !m.Info.IsFromMe || m.Info.Chat != srv.JID() || textOf(m) != "note to self" {
		t.Fatalf("got %+v %q", m.Info, textOf(m))
	}
	r, err := srv.WaitReceipt(ctx, id)
	if err != nil || r.Type != "sender" {
		t.Fatalf("receipt %+v %v", r, err)
	}
	// The client answers into the same chat: only the phone gets it.
	sm := c.send(ctx, srv, srv.JID(), &waE2E.Message{Conversation: proto.String("answer to self")})
	if sm.Text() != "answer to self" || !slices.Equal(sm.Recipients, []types.JID{srv.JID()}) || len(sm.Errors) != 0 {
		t.Fatalf("sent %+v", sm)
	}
	// The phone writes to a contact: the client sees it as its own message
	// in that chat.
	ct := addContact(t, srv, "15550001111", "200000000000001", "Alice")
	m, id = c.receive(func() (string, error) {
		return srv.PhoneSendText(ctx, ct.JID(), whatsapptest.TextOptions{Text: "from my phone"})
	}, nil)
	if m.Info.ID != id || !m.Info.IsFromMe || m.Info.Chat != ct.JID() || textOf(m) != "from my phone" {
		t.Fatalf("got %+v %q", m.Info, textOf(m))
	}
}

func TestMedia(t *testing.T) {
	t.Parallel()
	srv, c, _, ct := pairedWithAlice(t)
	ctx := ctxT(t)
	img := bytes.Repeat([]byte("\xff\xd8 not really a jpeg "), 1000)
	m, _ := c.receive(func() (string, error) {
		return ct.SendImage(ctx, whatsapptest.ImageOptions{Data: img, Caption: "look"})
	}, sameID)
	got, err := c.cli.Download(ctx, m.Message.GetImageMessage())
	if err != nil || !bytes.Equal(got, img) || m.Message.GetImageMessage().GetCaption() != "look" {
		t.Fatalf("image: %d bytes, %v", len(got), err)
	}
	voice := bytes.Repeat([]byte("OggS"), 500)
	m, _ = c.receive(func() (string, error) {
		return ct.SendVoiceNote(ctx, whatsapptest.VoiceOptions{Data: voice, Seconds: 3})
	}, sameID)
	if !m.Message.GetAudioMessage().GetPTT() {
		t.Fatalf("not a voice note: %v", m.Message)
	}
	got, err = c.cli.Download(ctx, m.Message.GetAudioMessage())
	if err != nil || !bytes.Equal(got, voice) {
		t.Fatalf("voice: %d bytes, %v", len(got), err)
	}
	// The client uploads and sends an image; the fake decrypts it.
	out := bytes.Repeat([]byte("png?"), 777)
	up, err := c.cli.Upload(ctx, out, whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	sm := c.send(ctx, srv, ct.JID(), &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileSHA256: up.FileSHA256, FileEncSHA256: up.FileEncSHA256, FileLength: proto.Uint64(up.FileLength),
		Mimetype: proto.String("image/png"), Caption: proto.String("mine"),
	}})
	data, err := srv.DownloadSent(sm)
	if err != nil || !bytes.Equal(data, out) {
		t.Fatalf("sent image: %d bytes, %v", len(data), err)
	}
}

func TestPairByCode(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c, _, _ := unpaired(t, srv)
	ctx := ctxT(t)
	code, err := c.cli.PairPhone(ctx, "+"+srv.JID().User, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.PairCode(ctx, code); err != nil {
		t.Fatal(err)
	}
	waitEvent[*events.PairSuccess](t, c, 0, nil)
	waitEvent[*events.Connected](t, c, 0, nil)
	if err := srv.WaitLoggedIn(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPairingRejectsWrongSecrets(t *testing.T) {
	t.Parallel()
	t.Run("qr-with-other-adv-secret", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c, qr, _ := unpaired(t, srv)
		parts := strings.Split(qr.Codes[0], ",")
		parts[3] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
		if err := srv.PairQR(ctxT(t), strings.Join(parts, ",")); err == nil {
			t.Fatal("pairing with a wrong ADV secret succeeded")
		}
		waitEvent[*events.PairError](t, c, 0, nil)
		if _, _, ok := srv.Device(); ok {
			t.Fatal("device linked")
		}
	})
	t.Run("wrong-code", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c, _, _ := unpaired(t, srv)
		ctx := ctxT(t)
		code, err := c.cli.PairPhone(ctx, srv.JID().User, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
		if err != nil {
			t.Fatal(err)
		}
		wrong := "AAAA-AAAA"
		if code == wrong {
			wrong = "BBBB-BBBB"
		}
		if err := srv.PairCode(ctx, wrong); err == nil {
			t.Fatal("pairing with a wrong code succeeded")
		}
		if _, _, ok := srv.Device(); ok {
			t.Fatal("device linked")
		}
	})
}
