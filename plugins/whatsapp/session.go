package whatsapp

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// QR codes rotate as WhatsApp hands them out at linking: the first is
// valid 60 s, each next one 20 s; when the last expires the linking
// connection is closed.
const (
	firstQRValid = 60 * time.Second
	nextQRValid  = 20 * time.Second
)

// linkHelpURL is WhatsApp's help page on linking a device.
const linkHelpURL = "https://faq.whatsapp.com/1317564962315842"

// endKind is why a connection ended for good (until the operator acts).
type endKind int

const (
	endNone         endKind = iota // ctx ended
	endConnectError                // no connection at all: retried by Run with backoff
	endQRTimeout                   // nobody scanned the QR codes in time
	endPairError                   // the phone's answer did not verify
	endLoggedOut                   // the account removed this device
	endReplaced                    // another session with the same device took over
	endBanned                      // a temporary ban
	endOutdated                    // 405: WhatsApp refuses this client version
	endFailure                     // another connect failure whatsmeow does not retry
)

// ending is how and why a connection ended.
type ending struct {
	kind   endKind
	err    error
	reason events.ConnectFailureReason
	ban    events.TempBanReason
	until  time.Time
	detail string
}

// session is one whatsmeow client from connecting to its end. After a
// Retry the next session has a client of its own (and, after a logout, a
// new device), so a late event of an old client is ignored.
type session struct {
	cli    *whatsmeow.Client
	end    chan ending   // the first ending wins
	done   chan struct{} // closed when the session is over
	paired chan struct{} // closed on PairSuccess
	linked atomic.Bool   // the device has an account (from the store or PairSuccess)
	// loggingIn: linked by this session and not connected yet; the
	// reconnect WhatsApp asks for after a link (a 515 stream error) is
	// part of the login, not a dropped connection.
	loggingIn atomic.Bool

	pairOnce, qrOnce, doneOnce sync.Once

	mu        sync.Mutex
	qr        string    // the QR code shown now
	qrExpires time.Time // when it rotates
	qrEnd     time.Time // when linking gives up
	phoneCode string    // the pairing code for pair_phone, once WhatsApp gave it
	device    string    // the device's JID (with device part), once linked
}

func (s *session) setDevice(j types.JID) {
	s.mu.Lock()
	s.device = j.String()
	s.mu.Unlock()
}

func (s *session) deviceJID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.device
}

func newSession(cli *whatsmeow.Client) *session {
	s := &session{cli: cli, end: make(chan ending, 1), done: make(chan struct{}), paired: make(chan struct{})}
	s.linked.Store(cli.Store.ID != nil)
	return s
}

func (s *session) finish(e ending) {
	select {
	case s.end <- e:
	default:
	}
}

// runSession connects a client and waits for its ending.
func (a *Adapter) runSession(ctx context.Context) ending {
	dev, err := a.container.GetFirstDevice(ctx)
	if err != nil {
		return ending{kind: endConnectError, err: fmt.Errorf("read the device store: %w", err)}
	}
	cli := whatsmeow.NewClient(dev, newWALogger(a.log.With("component", "whatsmeow")))
	cli.SynchronousAck = true             // the receipt waits for the handler: no receipt before the host stored it
	cli.EnableDecryptedEventBuffer = true // a redelivered message is not decrypted twice (the ratchet moved on)
	cli.ManualHistorySyncDownload = true  // never download or replay the chat history
	cli.InitialAutoReconnect = true       // a linked device offline at start keeps trying by itself
	// The connection's context ends only after Disconnect: canceling it
	// first closes the socket under whatsmeow's feet, and its read pump
	// then races with Disconnect (seen with -race).
	connCtx, endConn := context.WithCancel(context.WithoutCancel(ctx))
	cli.BackgroundEventCtx = connCtx
	if a.set.server != "" {
		useTestServer(cli, a.set.server)
	} else {
		guardMedia(cli, nil)
	}
	s := newSession(cli)
	if dev.ID != nil {
		s.setDevice(*dev.ID)
	}
	if s.linked.Load() {
		a.me.Store(&identity{PN: dev.GetJID().ToNonAD(), LID: dev.GetLID().ToNonAD()})
	} else {
		a.status.Report(status.Status{State: status.NeedsAttention, Message: "Connecting to WhatsApp to link this device; a QR code follows."})
	}
	a.sess.Store(s)
	a.connectedAt.Store(0)
	handler := cli.AddEventHandlerWithSuccessStatus(func(evt any) bool { return a.handle(ctx, s, evt) })
	defer func() {
		s.doneOnce.Do(func() { close(s.done) })
		cli.Disconnect()
		endConn()
		cli.RemoveEventHandler(handler)
		a.connectedAt.Store(0)
	}()
	if err := cli.ConnectContext(connCtx); err != nil {
		return ending{kind: endConnectError, err: err}
	}
	select {
	case <-ctx.Done():
		return ending{}
	case e := <-s.end:
		if e.kind == endLoggedOut {
			a.forgetDevice(ctx, s)
		}
		return e
	}
}

// forgetDevice deletes a logged-out device from the store. whatsmeow does
// so too, but on its own goroutine after dispatching LoggedOut; a Retry
// before it finished would log in with the dead credentials again. The
// row is deleted by the JID taken when the session learnt it, never read
// from the client's store, which whatsmeow is resetting.
func (a *Adapter) forgetDevice(ctx context.Context, s *session) {
	jid := s.deviceJID()
	if jid == "" {
		return
	}
	if _, err := a.db.ExecContext(ctx, `DELETE FROM whatsmeow_device WHERE jid = ?`, jid); err != nil {
		a.log.Warn("could not delete the logged-out device", "error", err)
	}
}

// handle is the whatsmeow event handler of session s. It returns false
// only for a message the host did not store: whatsmeow then sends no
// receipt and WhatsApp delivers the message again after a reconnect.
func (a *Adapter) handle(ctx context.Context, s *session, evt any) bool {
	if a.sess.Load() != s {
		return true
	}
	switch e := evt.(type) {
	case *events.Message:
		return a.onMessage(ctx, s, e)
	case *events.QR:
		a.onQR(ctx, s, e)
	case *events.PairSuccess:
		s.pairOnce.Do(func() { close(s.paired) })
		s.linked.Store(true)
		s.setDevice(e.ID)
		a.me.Store(&identity{PN: e.ID.ToNonAD(), LID: e.LID.ToNonAD()})
		a.log.Info("linked to the WhatsApp account", "phone", "+"+e.ID.User, "platform", e.Platform)
		s.loggingIn.Store(true)
		// Progress, not a failure: the host logs it at INFO.
		a.status.Report(status.Status{State: status.Starting, Message: "Linked to +" + e.ID.User + "; logging in."})
	case *events.PairError:
		s.finish(ending{kind: endPairError, err: e.Error})
	case *events.QRScannedWithoutMultidevice:
		a.log.Warn("the QR code was scanned by a phone without multi-device support; update WhatsApp on the phone")
	case *events.Connected:
		a.onConnected(s)
	case *events.Disconnected:
		a.connectedAt.Store(0)
		if !s.linked.Load() {
			s.finish(ending{kind: endQRTimeout, detail: "WhatsApp closed the linking connection"})
			return true
		}
		if s.loggingIn.Load() {
			a.status.Report(status.Status{State: status.Starting, Message: "Linked; logging in (WhatsApp restarts the connection after a link)."})
			return true
		}
		a.status.Report(status.Status{State: status.Degraded, Message: "The connection to WhatsApp dropped; reconnecting by itself."})
	case *events.KeepAliveTimeout:
		a.status.Report(status.Status{State: status.Degraded, Message: fmt.Sprintf("WhatsApp stopped answering keepalives (%d missed); reconnecting by itself.", e.ErrorCount)})
	case *events.KeepAliveRestored:
		a.status.Report(status.Status{State: status.Ready})
	case *events.LoggedOut:
		// Dispatched before whatsmeow deletes the device: s.cli.Store must
		// not be read here.
		s.finish(ending{kind: endLoggedOut, reason: e.Reason})
	case *events.StreamReplaced:
		s.finish(ending{kind: endReplaced})
	case *events.TemporaryBan:
		s.finish(ending{kind: endBanned, ban: e.Code, until: a.now().Add(e.Expire)})
	case *events.ClientOutdated:
		s.finish(ending{kind: endOutdated})
	case *events.ConnectFailure:
		s.finish(ending{kind: endFailure, reason: e.Reason, detail: e.Message})
	case *events.StreamError:
		a.log.Warn("WhatsApp sent an unknown stream error", "code", e.Code)
	}
	return true
}

// onConnected: logged in; messages flow.
func (a *Adapter) onConnected(s *session) {
	s.linked.Store(true)
	s.loggingIn.Store(false)
	me := identity{PN: s.cli.Store.GetJID().ToNonAD(), LID: s.cli.Store.GetLID().ToNonAD()}
	a.me.Store(&me)
	a.connectedAt.Store(a.now().UnixNano())
	a.log.Info("connected to WhatsApp", "phone", "+"+me.PN.User, "lid", me.LID.String())
	a.status.Report(status.Status{State: status.Ready})
}

// onQR starts showing the QR codes of a linking connection (once per
// session) and, with pair_phone, asks for a pairing code.
func (a *Adapter) onQR(ctx context.Context, s *session, e *events.QR) {
	s.qrOnce.Do(func() {
		codes := slices.Clone(e.Codes)
		if len(codes) == 0 {
			return
		}
		s.mu.Lock()
		s.qrEnd = a.now().Add(firstQRValid + time.Duration(len(codes)-1)*nextQRValid)
		s.mu.Unlock()
		go a.rotateQR(ctx, s, codes)
		if a.set.pairPhone != "" {
			go a.pairPhone(ctx, s)
		}
	})
}

// rotateQR shows each code for its time, then ends the session: no
// endless new codes — the operator asks for a new round with Retry.
func (a *Adapter) rotateQR(ctx context.Context, s *session, codes []string) {
	for i, code := range codes {
		valid := nextQRValid
		if i == 0 {
			valid = firstQRValid
		}
		s.mu.Lock()
		s.qr, s.qrExpires = code, a.now().Add(valid)
		s.mu.Unlock()
		a.log.Info("scan this QR code with WhatsApp on the phone (Settings → Linked devices → Link a device); it is on the status page and in clawhost status too",
			"qr", code, "valid_for", valid, "codes_left", len(codes)-i-1)
		a.reportLinking(s)
		select {
		case <-a.after(valid):
		case <-s.paired:
			return
		case <-s.done:
			return
		case <-ctx.Done():
			return
		}
	}
	s.finish(ending{kind: endQRTimeout})
}

// pairPhone asks WhatsApp for a pairing code for pair_phone.
func (a *Adapter) pairPhone(ctx context.Context, s *session) {
	code, err := s.cli.PairPhone(ctx, a.set.pairPhone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		a.log.Warn("WhatsApp gave no pairing code for pair_phone; scan the QR code instead", "error", err)
		return
	}
	s.mu.Lock()
	s.phoneCode = code
	s.mu.Unlock()
	a.log.Info("type this pairing code on the phone (WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead)", "code", code, "phone", "+"+a.set.pairPhone)
	a.reportLinking(s)
}

// reportLinking reports the current way to link: the pairing code when
// there is one, else the QR code.
func (a *Adapter) reportLinking(s *session) {
	s.mu.Lock()
	qr, expires, end, code := s.qr, s.qrExpires, s.qrEnd, s.phoneCode
	s.mu.Unlock()
	select {
	case <-s.paired:
		return
	default:
	}
	if code != "" {
		a.status.Report(status.Status{State: status.NeedsAttention,
			Message:   "Link WhatsApp: on the phone with the number +" + a.set.pairPhone + ", open WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and type this code before " + end.Format("15:04:05") + ".",
			Attention: &status.Attention{Kind: status.Code, Data: code, ExpiresAt: end}})
		return
	}
	if qr == "" {
		return
	}
	a.status.Report(status.Status{State: status.NeedsAttention,
		Message:   "Link WhatsApp: on the phone open WhatsApp → Settings → Linked devices → Link a device, and scan this QR code. It changes every 20 s; linking gives up at " + end.Format("15:04:05") + ".",
		Attention: &status.Attention{Kind: status.QR, Data: qr, ExpiresAt: expires}})
}

// Retry labels.
const (
	retryNewQR     = "Show a new QR code"
	retryReconnect = "Reconnect"
)

// reportEnd tells the operator what ended the connection and what to do.
// Run then waits for Retry.
func (a *Adapter) reportEnd(e ending) {
	st := status.Status{State: status.NeedsAttention}
	retryCmd := "clawhost retry " + a.instance
	switch e.kind {
	case endQRTimeout:
		st.Message = "No phone linked this device in time, so WhatsApp stopped offering QR codes. Press \"" + retryNewQR + "\" (or run " + retryCmd + ") and scan the new code within a minute."
		if e.detail != "" {
			st.Message = "Linking stopped: " + e.detail + ". Press \"" + retryNewQR + "\" (or run " + retryCmd + ") and scan the new code."
		}
		st.Attention = &status.Attention{Kind: status.Link, Data: linkHelpURL, Retry: retryNewQR}
	case endPairError:
		st.Message = "Linking failed: " + e.err.Error() + ". Press \"" + retryNewQR + "\" (or run " + retryCmd + ") and scan again."
		st.Attention = &status.Attention{Kind: status.Link, Data: linkHelpURL, Retry: retryNewQR}
	case endLoggedOut:
		st.Message = "WhatsApp logged this device out (" + e.reason.String() + "): it was removed under Linked devices on the phone, or the phone stayed offline too long. Press \"" + retryNewQR + "\" (or run " + retryCmd + ") and scan the new code with the phone."
		st.Attention = &status.Attention{Kind: status.Link, Data: linkHelpURL, Retry: retryNewQR}
	case endReplaced:
		st.Message = "Another session with this device's keys took over the connection (a second clawhost with a copy of the data dir?). Stop the other one, then press \"" + retryReconnect + "\" (or run " + retryCmd + ")."
		st.Attention = &status.Attention{Kind: status.Link, Data: linkHelpURL, Retry: retryReconnect}
	case endBanned:
		st.Message = fmt.Sprintf("WhatsApp banned this number temporarily (%s) until %s. Wait until then, then press \"%s\" (or run %s). Send less, and more slowly (pacing), to avoid a permanent ban.",
			e.ban.String(), e.until.Format(time.RFC1123), retryReconnect, retryCmd)
		st.Attention = &status.Attention{Kind: status.Link, Data: "https://faq.whatsapp.com/", ExpiresAt: e.until, Retry: retryReconnect}
	case endOutdated:
		st.Message = "WhatsApp refuses this client as outdated (405). Update clawhost-whatsapp, or set web_version in the plugin block to the current WhatsApp Web version and reload; then press \"" + retryReconnect + "\" (or run " + retryCmd + ")."
		st.Attention = &status.Attention{Kind: status.Link, Data: "https://github.com/tulir/whatsmeow", Retry: retryReconnect}
	default:
		st.Message = fmt.Sprintf("WhatsApp refused the connection (%d: %s %s). Press \"%s\" (or run %s) to try again.", int(e.reason), e.reason.String(), e.detail, retryReconnect, retryCmd)
		st.Attention = &status.Attention{Kind: status.Link, Data: linkHelpURL, Retry: retryReconnect}
	}
	a.log.Error("not connected to WhatsApp until an operator acts", "why", st.Message)
	a.status.Report(st)
}

// onMessage delivers a message to the host and reports whether the host
// stored it.
func (a *Adapter) onMessage(ctx context.Context, s *session, e *events.Message) bool {
	in := inbound{
		selfChat: a.set.selfChat, onlySelfChat: a.set.onlySelfChat,
		cutoff: a.cutoff(), sent: a.sent.has,
		alt: func(j types.JID) types.JID {
			// The container's LID map, not s.cli.Store: that one is
			// reset when the device is logged out.
			var alt types.JID
			var err error
			switch j.Server {
			case types.HiddenUserServer:
				alt, err = a.container.LIDMap.GetPNForLID(ctx, j)
			case types.DefaultUserServer:
				alt, err = a.container.LIDMap.GetLIDForPN(ctx, j)
			}
			if err != nil {
				return types.EmptyJID
			}
			return alt
		},
	}
	if me := a.me.Load(); me != nil {
		in.me = *me
	}
	msg, why := in.convert(e)
	if why == skipBacklog {
		// A person's message, not answered by policy (a reply to a
		// backlog risks a ban): said where the operator looks, with
		// what to change if these should be answered.
		a.log.Info("message older than the connection not answered (backlog); raise backlog_margin to answer such messages",
			"id", e.Info.ID, "chat", e.Info.Chat.String(), "age", a.now().Sub(e.Info.Timestamp).Round(time.Second), "backlog_margin", a.set.backlogMargin)
		return true
	}
	if why != "" {
		a.log.Log(ctx, levelTrace, "message not delivered", "id", e.Info.ID, "chat", e.Info.Chat.String(), "why", why)
		return true
	}
	if msg.ChatType == channel.ChatGroup {
		msg.ChatTitle = a.groupName(ctx, s, e.Info.Chat.ToNonAD())
	}
	if err := a.inbox.Deliver(ctx, msg); err != nil {
		a.log.Warn("the host did not store a message; WhatsApp delivers it again after a reconnect", "id", e.Info.ID, "error", err)
		return false
	}
	a.recent.put(e.Info.ID, quoted{chat: e.Info.Chat.ToNonAD(), sender: e.Info.Sender.ToNonAD(), text: msg.Text})
	if a.set.readReceipts && !e.Info.IsFromMe {
		go func() {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := s.cli.MarkRead(rctx, []types.MessageID{e.Info.ID}, e.Info.Timestamp, e.Info.Chat, e.Info.Sender); err != nil {
				a.log.Debug("could not mark a message read", "id", e.Info.ID, "error", err)
			}
		}()
	}
	return true
}

// groupName returns the cached name of a group, and looks it up in the
// background the first time (the message is not held for it).
func (a *Adapter) groupName(ctx context.Context, s *session, g types.JID) string {
	a.groupMu.Lock()
	name, ok := a.groupNames[g]
	if !ok {
		a.groupNames[g] = ""
	}
	a.groupMu.Unlock()
	if !ok {
		go func() {
			gctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			info, err := s.cli.GetGroupInfo(gctx, g)
			if err != nil {
				a.log.Debug("could not read the group's name", "group", g.String(), "error", err)
				return
			}
			a.groupMu.Lock()
			a.groupNames[g] = info.Name
			a.groupMu.Unlock()
		}()
	}
	return name
}
