package whatsapp

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// The tests below drive the plugin — the real whatsmeow client, its
// SQLite store, the event handler — against whatsapptest, a fake WhatsApp
// server on loopback; the test plays the phone and the contacts.

const waitLong = 20 * time.Second

// inbox records what the plugin delivers; with hold set, Deliver blocks
// until its context ends (the host never stores the message).
type inbox struct {
	mu   sync.Mutex
	msgs []channel.InboundMessage
	c    chan channel.InboundMessage
	hold bool
}

func newInbox() *inbox { return &inbox{c: make(chan channel.InboundMessage, 64)} }

func (b *inbox) Deliver(ctx context.Context, msgs ...channel.InboundMessage) error {
	b.mu.Lock()
	hold := b.hold
	b.mu.Unlock()
	if hold {
		<-ctx.Done()
		return ctx.Err()
	}
	for _, m := range msgs {
		b.mu.Lock()
		b.msgs = append(b.msgs, m)
		b.mu.Unlock()
		b.c <- m
	}
	return nil
}

func (b *inbox) next(t *testing.T) channel.InboundMessage {
	t.Helper()
	select {
	case m := <-b.c:
		return m
	case <-time.After(waitLong):
		t.Fatal("nothing delivered")
		return channel.InboundMessage{}
	}
}

func (b *inbox) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-b.c:
		t.Fatalf("unexpected delivery: %+v", m)
	case <-time.After(d):
	}
}

func isQR(s status.Status) bool {
	return s.State == status.NeedsAttention && s.Attention != nil && s.Attention.Kind == status.QR
}

func isReady(s status.Status) bool { return s.State == status.Ready }

// fakeRig is a plugin instance connected to a fake WhatsApp.
type fakeRig struct {
	srv    *whatsapptest.Server
	a      *Adapter
	in     *inbox
	st     *sdktest.Statuses
	dir    string
	cfg    map[string]any
	cancel context.CancelFunc
	done   chan struct{}
}

func newFake(t *testing.T) *whatsapptest.Server {
	t.Helper()
	srv, err := whatsapptest.New(whatsapptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// start configures and runs a plugin instance against srv with the data
// dir dir; extra settings override the test defaults.
func start(t *testing.T, srv *whatsapptest.Server, dir string, extra map[string]any) *fakeRig {
	t.Helper()
	cfg := map[string]any{"server_address": srv.Addr(), "server_root_key": srv.RootKeyHex(),
		"pacing": map[string]string{"min": "0s", "max": "0s"}, "read_receipts": false}
	for k, v := range extra {
		cfg[k] = v
	}
	r := &fakeRig{srv: srv, a: New(), in: newInbox(), st: &sdktest.Statuses{}, dir: dir, cfg: cfg, done: make(chan struct{})}
	b, _ := json.Marshal(cfg)
	if err := r.a.Configure(t.Context(), schema.Config{Instance: "wa", DataDir: dir, JSON: b, Status: r.st}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		if err := r.a.Run(ctx, r.in); err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *fakeRig) stop() {
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		panic("the plugin's Run did not return after cancel")
	}
}

// link plays the phone: scans the QR code the plugin shows, then waits
// until the plugin is ready.
func (r *fakeRig) link(t *testing.T) {
	t.Helper()
	qr, next := r.st.Wait(t, 0, "QR", isQR)
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	if err := r.srv.PairQR(ctx, qr.Attention.Data); err != nil {
		t.Fatal(err)
	}
	r.st.Wait(t, next, "ready", isReady)
}

// startLinked is start, then link.
func startLinked(t *testing.T, srv *whatsapptest.Server, dir string, extra map[string]any) *fakeRig {
	t.Helper()
	r := start(t, srv, dir, extra)
	r.link(t)
	return r
}

func contact(t *testing.T, srv *whatsapptest.Server, phone, lid, name string) *whatsapptest.Contact {
	t.Helper()
	c, err := srv.AddContact(whatsapptest.ContactOptions{Phone: phone, LID: lid, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxLong(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	t.Cleanup(cancel)
	return ctx
}

// TestFakeLinkAndConverse: linking by QR; a DM by phone number and one
// LID-addressed arrive with the same ids; the reply quotes its trigger;
// a long reply is split; typing is the chat presence; the link survives a
// restart of the plugin.
func TestFakeLinkAndConverse(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	dir := t.TempDir()
	r := startLinked(t, srv, dir, nil)
	ann := contact(t, srv, "15550002222", "200000000000002", "Ann")
	ctx := ctxLong(t)

	id, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "hello bot"})
	if err != nil {
		t.Fatal(err)
	}
	m := r.in.next(t)
	if m.MessageID != id || m.ChatType != channel.ChatDirect || m.ChatID != "+15550002222" || m.Sender.ID != "+15550002222" ||
		strings.Join(m.Sender.AltIDs, ",") != "200000000000002@lid" || m.Text != "hello bot" || m.Sender.Name != "Ann" {
		t.Fatalf("DM: %+v", m)
	}
	if _, err := srv.WaitReceipt(ctx, id); err != nil {
		t.Fatalf("no receipt after the host stored the message: %v", err)
	}

	if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "by lid", LIDAddressed: true}); err != nil {
		t.Fatal(err)
	}
	m2 := r.in.next(t)
	if m2.ChatID != "+15550002222" || m2.Sender.ID != "+15550002222" || strings.Join(m2.Sender.AltIDs, ",") != "200000000000002@lid" {
		t.Fatalf("LID-addressed DM: %+v", m2)
	}

	if err := r.a.SetTyping(ctx, channel.TypingRequest{ChatID: m.ChatID, On: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitChatPresence(ctx, func(p whatsapptest.ChatPresence) bool { return p.State == "composing" }); err != nil {
		t.Fatal(err)
	}
	resp, err := r.a.Send(ctx, channel.SendRequest{ChatID: m.ChatID, Text: "**Hi** Ann", Format: channel.FormatMarkdown, ReplyToMessageID: m.MessageID,
		Rendered: markup.RenderFor("**Hi** Ann", channel.MarkupLightweight)})
	if err != nil || len(resp.MessageIDs) != 1 {
		t.Fatalf("send: %v %v", resp, err)
	}
	sent, err := srv.WaitSent(ctx, func(s whatsapptest.SentMessage) bool { return s.ID == resp.MessageIDs[0] })
	if err != nil {
		t.Fatal(err)
	}
	if sent.Text() != "*Hi* Ann" || sent.QuotedID() != m.MessageID || sent.ContextInfo().GetQuotedMessage().GetConversation() != "hello bot" {
		t.Errorf("reply %q quoting %q", sent.Text(), sent.QuotedID())
	}

	// The host splits to the limit: a longer text is refused whole.
	long := strings.Repeat("word ", 1000) + "\n" + strings.Repeat("more ", 200) // 6000 units as plain text
	resp, err = r.a.Send(ctx, channel.SendRequest{ChatID: m.ChatID, Text: long})
	if channel.CodeOf(err) != channel.CodeMessageTooLong || len(resp.MessageIDs) != 0 {
		t.Fatalf("long send: %v %v", resp, err)
	}

	// Linked state survives a restart: no QR code, ready again.
	r.stop()
	r2 := start(t, srv, dir, nil)
	r2.st.Wait(t, 0, "ready after restart", isReady)
	for _, s := range r2.st.All() {
		if isQR(s) {
			t.Fatal("a QR code after a restart of a linked plugin")
		}
	}
}

// TestFakeGroupAndLIDAllowlist: a group message is delivered with the
// sender's phone number as id although WhatsApp addresses it by LID;
// mentions by LID and replies quoting the bot are mentions; a reply in
// the group goes out to the members.
func TestFakeGroup(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	r := startLinked(t, srv, t.TempDir(), nil)
	ann := contact(t, srv, "15550003333", "200000000000003", "Ann")
	bob := contact(t, srv, "15550004444", "200000000000004", "Bob")
	g, err := srv.AddGroup(whatsapptest.GroupOptions{ID: "120363000000000042", Name: "Team", Members: []*whatsapptest.Contact{ann, bob}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxLong(t)
	if _, err := ann.SendGroupText(ctx, g, whatsapptest.TextOptions{Text: "chatter"}); err != nil {
		t.Fatal(err)
	}
	m := r.in.next(t)
	if m.ChatType != channel.ChatGroup || m.ChatID != "120363000000000042@g.us" || m.Sender.ID != "+15550003333" || m.WasMentioned {
		t.Fatalf("group chatter: %+v", m)
	}
	if _, err := bob.SendGroupText(ctx, g, whatsapptest.TextOptions{Text: "@100000000000001 /status", Mentions: []types.JID{srv.LID()}}); err != nil {
		t.Fatal(err)
	}
	m = r.in.next(t)
	if !m.WasMentioned || m.CommandText != "/status" || m.Sender.ID != "+15550004444" {
		t.Fatalf("mention by LID: %+v", m)
	}
	resp, err := r.a.Send(ctx, channel.SendRequest{ChatID: m.ChatID, Text: "ok", ReplyToMessageID: m.MessageID})
	if err != nil {
		t.Fatalf("group send: %v", err)
	}
	if _, err := srv.WaitSent(ctx, func(s whatsapptest.SentMessage) bool { return s.ID == resp.MessageIDs[0] && s.To == g.JID() }); err != nil {
		t.Fatal(err)
	}
	if _, err := ann.SendGroupText(ctx, g, whatsapptest.TextOptions{Text: "thanks", QuoteID: resp.MessageIDs[0], QuoteParticipant: srv.LID(), QuoteText: "ok"}); err != nil {
		t.Fatal(err)
	}
	m = r.in.next(t)
	if !m.WasMentioned || m.ReplyTo == nil || !m.ReplyTo.ToBot {
		t.Fatalf("reply to the bot: %+v", m)
	}
}

// TestFakeSelfChat: with self_chat the owner's notes to self are inbound;
// the plugin's replies into the same chat never come back.
func TestFakeSelfChat(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	r := startLinked(t, srv, t.TempDir(), map[string]any{"self_chat": true, "only_self_chat": true})
	ctx := ctxLong(t)
	if _, err := srv.PhoneSendText(ctx, srv.JID(), whatsapptest.TextOptions{Text: "remind me"}); err != nil {
		t.Fatal(err)
	}
	m := r.in.next(t)
	if m.ChatID != "+15550000001" || m.Sender.ID != "+15550000001" || m.Text != "remind me" {
		t.Fatalf("self chat: %+v", m)
	}
	for range 3 {
		if _, err := r.a.Send(ctx, channel.SendRequest{ChatID: m.ChatID, Text: "noted"}); err != nil {
			t.Fatal(err)
		}
	}
	ann := contact(t, srv, "15550005555", "200000000000005", "Ann")
	if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PhoneSendText(ctx, ann.JID(), whatsapptest.TextOptions{Text: "to Ann from my phone"}); err != nil {
		t.Fatal(err)
	}
	r.in.none(t, time.Second)
}

// TestFakeRedeliveryAfterRestart: a message the host never stored gets no
// receipt; after a restart WhatsApp delivers it again and it arrives once.
func TestFakeRedeliveryAfterRestart(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	dir := t.TempDir()
	r := startLinked(t, srv, dir, nil)
	r.in.mu.Lock()
	r.in.hold = true
	r.in.mu.Unlock()
	ann := contact(t, srv, "15550006666", "200000000000006", "Ann")
	ctx := ctxLong(t)
	id, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "once"})
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "pending delivery", func() bool { return contains(srv.Pending(), id) })
	r.stop()
	for _, rc := range srv.Receipts() {
		if rc.ID == id {
			t.Fatalf("receipt %+v for a message the host never stored", rc)
		}
	}
	logins := srv.Logins()
	r2 := start(t, srv, dir, nil)
	if err := srv.WaitLogins(ctx, logins+1); err != nil {
		t.Fatal(err)
	}
	m := r2.in.next(t)
	if m.MessageID != id || m.Text != "once" {
		t.Fatalf("redelivered %+v", m)
	}
	if _, err := srv.WaitReceipt(ctx, id); err != nil {
		t.Fatal(err)
	}
	r2.in.none(t, 500*time.Millisecond)
}

// TestFakeTerminal: a device removed on the phone and a refused client
// version end in needs_attention; after a logout Retry shows a fresh QR
// code and linking again works.
func TestFakeTerminal(t *testing.T) {
	t.Parallel()
	t.Run("logged out, then relinked", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t)
		r := startLinked(t, srv, t.TempDir(), nil)
		from := len(r.st.All())
		srv.RemoveDevice()
		st, next := r.st.Wait(t, from, "logged out", func(s status.Status) bool {
			return s.State == status.NeedsAttention && strings.Contains(s.Message, "logged this device out")
		})
		if st.Attention == nil || st.Attention.Retry != retryNewQR {
			t.Fatalf("logged out: %+v", st)
		}
		if err := r.a.Retry(t.Context()); err != nil {
			t.Fatal(err)
		}
		qr, next := r.st.Wait(t, next, "a fresh QR code", isQR)
		if err := srv.PairQR(ctxLong(t), qr.Attention.Data); err != nil {
			t.Fatal(err)
		}
		r.st.Wait(t, next, "ready after relinking", isReady)
	})
	t.Run("client outdated", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t)
		r := startLinked(t, srv, t.TempDir(), nil)
		from := len(r.st.All())
		srv.SetFailure(whatsapptest.Failure{Reason: whatsapptest.FailureClientOutdated})
		if err := srv.DropConnection(); err != nil {
			t.Fatal(err)
		}
		st, _ := r.st.Wait(t, from, "outdated", func(s status.Status) bool {
			return s.State == status.NeedsAttention && strings.Contains(s.Message, "web_version")
		})
		if st.Attention == nil || st.Attention.Retry != retryReconnect {
			t.Fatalf("outdated: %+v", st)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestFakePairPhone: with pair_phone the plugin shows a pairing code the
// owner types on the phone, and links.
func TestFakePairPhone(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	r := start(t, srv, t.TempDir(), map[string]any{"pair_phone": "+" + srv.JID().User})
	st, next := r.st.Wait(t, 0, "pairing code", func(s status.Status) bool {
		return s.State == status.NeedsAttention && s.Attention != nil && s.Attention.Kind == status.Code
	})
	if !strings.Contains(st.Message, "Link with phone number") || st.Attention.ExpiresAt.IsZero() {
		t.Errorf("code status: %+v", st)
	}
	if err := srv.PairCode(ctxLong(t), st.Attention.Data); err != nil {
		t.Fatal(err)
	}
	r.st.Wait(t, next, "ready", isReady)
}

// TestFakeMedia: a voice note comes in as MediaVoice and downloads; an
// image goes out and the recipient can decrypt it.
func TestFakeMedia(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	r := startLinked(t, srv, t.TempDir(), nil)
	ann := contact(t, srv, "15550008888", "200000000000008", "Ann")
	ctx := ctxLong(t)
	voice := []byte("OggS fake opus bytes")
	if _, err := ann.SendVoiceNote(ctx, whatsapptest.VoiceOptions{Data: voice, Seconds: 2}); err != nil {
		t.Fatal(err)
	}
	m := r.in.next(t)
	if len(m.Media) != 1 || m.Media[0].Kind != channel.MediaVoice {
		t.Fatalf("voice note: %+v", m)
	}
	rc, info, err := r.a.DownloadMedia(ctx, channel.DownloadRequest{Ref: m.Media[0].Ref})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 100)
	n, _ := rc.Read(got)
	rc.Close()
	if string(got[:n]) != string(voice) || info.Size != int64(len(voice)) {
		t.Errorf("downloaded %q (%+v)", got[:n], info)
	}
	if _, _, err := r.a.DownloadMedia(ctx, channel.DownloadRequest{Ref: m.Media[0].Ref, MaxBytes: 3}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Errorf("over max bytes: %v", err)
	}

	img := t.TempDir() + "/chart.png"
	png := []byte("\x89PNG\r\n\x1a\n fake image")
	if err := os.WriteFile(img, png, 0o600); err != nil {
		t.Fatal(err)
	}
	// A markdown caption goes as the host rendered it.
	resp, err := r.a.Send(ctx, channel.SendRequest{ChatID: m.ChatID, Format: channel.FormatMarkdown, Media: []channel.OutboundMedia{{Path: img, Kind: channel.MediaImage,
		Caption: "**the chart**", CaptionRendered: markup.RenderFor("**the chart**", channel.MarkupLightweight)}}})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := srv.WaitSent(ctx, func(s whatsapptest.SentMessage) bool { return s.ID == resp.MessageIDs[0] })
	if err != nil {
		t.Fatal(err)
	}
	data, err := srv.DownloadSent(sent)
	if err != nil || string(data) != string(png) || sent.Message.GetImageMessage().GetCaption() != "*the chart*" {
		t.Errorf("image out: %q %v caption %q", data, err, sent.Message.GetImageMessage().GetCaption())
	}

	// A voice note out (the voice plugin's spoken reply): push-to-talk,
	// with the type WhatsApp plays.
	ogg := t.TempDir() + "/voice.ogg"
	if err := os.WriteFile(ogg, voice, 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err = r.a.Send(ctx, channel.SendRequest{ChatID: m.ChatID, Media: []channel.OutboundMedia{{Path: ogg, Kind: channel.MediaVoice}}})
	if err != nil {
		t.Fatal(err)
	}
	sent, err = srv.WaitSent(ctx, func(s whatsapptest.SentMessage) bool { return s.ID == resp.MessageIDs[0] })
	if err != nil {
		t.Fatal(err)
	}
	au := sent.Message.GetAudioMessage()
	if data, err := srv.DownloadSent(sent); err != nil || string(data) != string(voice) || !au.GetPTT() || au.GetMimetype() != "audio/ogg; codecs=opus" {
		t.Errorf("voice note out: %q %v ptt %v type %q", data, err, au.GetPTT(), au.GetMimetype())
	}
}
