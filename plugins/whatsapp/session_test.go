package whatsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// reports are the plugin's status reports, taken one at a time.
type reports struct {
	sdktest.Statuses
	taken int
}

// next waits for the report after the last one taken.
func (r *reports) next(t *testing.T) status.Status {
	t.Helper()
	st, n := r.Wait(t, r.taken, "a status report", func(status.Status) bool { return true })
	r.taken = n
	return st
}

// afterCall is one wait of the QR rotation, released by the test.
type afterCall struct {
	d  time.Duration
	ch chan time.Time
}

// testAdapter is a configured adapter (store in a temp dir, no network)
// with a fixed clock, a controllable QR timer, and a session whose client
// never connects.
func testAdapter(t *testing.T, cfg map[string]any) (*Adapter, *session, *reports, chan afterCall) {
	t.Helper()
	a := New()
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	a.now = func() time.Time { return now }
	calls := make(chan afterCall, 8)
	a.after = func(d time.Duration) <-chan time.Time {
		c := afterCall{d, make(chan time.Time, 1)}
		calls <- c
		return c.ch
	}
	rep := &reports{}
	b, _ := json.Marshal(cfg)
	if err := a.Configure(t.Context(), schema.Config{Instance: "wa", DataDir: t.TempDir(), JSON: b, Status: rep}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.db.Close() })
	cli := whatsmeow.NewClient(a.container.NewDevice(), nil)
	s := newSession(cli)
	a.sess.Store(s)
	return a, s, rep, calls
}

func ended(t *testing.T, s *session) ending {
	t.Helper()
	select {
	case e := <-s.end:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end")
		return ending{}
	}
}

// TestTerminalEvents: each event only a person can fix ends the session
// and becomes needs_attention saying what to do, with a retry.
func TestTerminalEvents(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		evt   any
		kind  endKind
		retry string
		says  []string
	}{
		{"logged out", &events.LoggedOut{Reason: events.ConnectFailureLoggedOut}, endLoggedOut, retryNewQR, []string{"logged this device out", "clawhost retry wa", "scan"}},
		{"stream replaced", &events.StreamReplaced{}, endReplaced, retryReconnect, []string{"Another session", "clawhost retry wa"}},
		{"temporary ban", &events.TemporaryBan{Code: events.TempBanSentToTooManyPeople, Expire: 90 * time.Minute}, endBanned, retryReconnect,
			[]string{"banned this number temporarily", "too many messages", "Wed, 06 May 2026 08:38:09 UTC", "pacing"}},
		{"client outdated", &events.ClientOutdated{}, endOutdated, retryReconnect, []string{"405", "web_version", "Update clawhost-whatsapp"}},
		{"other connect failure", &events.ConnectFailure{Reason: events.ConnectFailureBadUserAgent, Message: "bad ua"}, endFailure, retryReconnect, []string{"409", "bad ua"}},
		{"pair error", &events.PairError{Error: whatsmeow.ErrPairInvalidDeviceSignature}, endPairError, retryNewQR, []string{"Linking failed", "invalid device signature"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, s, rep, _ := testAdapter(t, nil)
			if !a.handle(t.Context(), s, c.evt) {
				t.Fatal("handler reported failure")
			}
			e := ended(t, s)
			if e.kind != c.kind {
				t.Fatalf("ending %v, want %v", e.kind, c.kind)
			}
			a.reportEnd(e)
			st := rep.next(t)
			if st.State != status.NeedsAttention || st.Attention == nil || st.Attention.Retry != c.retry {
				t.Fatalf("status %+v", st)
			}
			for _, w := range c.says {
				if !strings.Contains(st.Message, w) {
					t.Errorf("message %q does not say %q", st.Message, w)
				}
			}
			if c.kind == endBanned && !st.Attention.ExpiresAt.Equal(a.now().Add(90*time.Minute)) {
				t.Errorf("ban expires %v", st.Attention.ExpiresAt)
			}
		})
	}
}

// TestQRRotation: codes are reported one after the other (60 s, then 20 s
// each); when they run out the session ends and the operator is offered a
// new QR code — no endless codes.
func TestQRRotation(t *testing.T) {
	t.Parallel()
	a, s, rep, calls := testAdapter(t, nil)
	ctx := t.Context()
	codes := []string{"2@one", "2@two", "2@three"}
	a.handle(ctx, s, &events.QR{Codes: codes})
	a.handle(ctx, s, &events.QR{Codes: []string{"2@again"}}) // a second event starts nothing
	for i, code := range codes {
		st := rep.next(t)
		want := nextQRValid
		if i == 0 {
			want = firstQRValid
		}
		if st.State != status.NeedsAttention || st.Attention == nil || st.Attention.Kind != status.QR || st.Attention.Data != code ||
			!st.Attention.ExpiresAt.Equal(a.now().Add(want)) || !strings.Contains(st.Message, "Linked devices") {
			t.Fatalf("code %d: %+v", i, st)
		}
		c := <-calls
		if c.d != want {
			t.Fatalf("code %d shown for %v, want %v", i, c.d, want)
		}
		c.ch <- time.Time{}
	}
	e := ended(t, s)
	if e.kind != endQRTimeout {
		t.Fatalf("ending %v", e.kind)
	}
	a.reportEnd(e)
	st := rep.next(t)
	if st.State != status.NeedsAttention || st.Attention.Retry != retryNewQR || st.Attention.Kind == status.QR {
		t.Errorf("after the codes ran out: %+v", st)
	}
	select {
	case c := <-calls:
		t.Errorf("another QR wait (%v) after the codes ran out", c.d)
	default:
	}
}

// TestPairSuccessStopsQR: once the phone linked, no further code is shown
// and the linking connection does not end as a timeout.
func TestPairSuccessStopsQR(t *testing.T) {
	t.Parallel()
	a, s, rep, calls := testAdapter(t, nil)
	ctx := t.Context()
	a.handle(ctx, s, &events.QR{Codes: []string{"2@one", "2@two"}})
	rep.next(t)
	c := <-calls
	phone := types.NewJID("15550000001", types.DefaultUserServer)
	a.handle(ctx, s, &events.PairSuccess{ID: types.NewADJID(phone.User, 0, 5), LID: types.NewJID("9001", types.HiddenUserServer)})
	// Logging in after the link is progress, not an error.
	if st := rep.next(t); st.State != status.Starting || !strings.Contains(st.Message, "+15550000001") {
		t.Errorf("after pairing: %+v", st)
	}
	if me := a.me.Load(); me == nil || me.PN != phone {
		t.Errorf("identity %+v", me)
	}
	c.ch <- time.Time{}
	// The disconnect of the 515 restart is not a linking timeout now,
	// nor a dropped connection: the login goes on.
	a.handle(ctx, s, &events.Disconnected{})
	if st := rep.next(t); st.State != status.Starting {
		t.Errorf("reconnecting after linking: %+v", st)
	}
	select {
	case e := <-s.end:
		t.Errorf("session ended: %v", e.kind)
	case c := <-calls:
		t.Errorf("another QR wait after pairing (%v)", c.d)
	default:
	}
	// Once logged in, a dropped connection is one again.
	a.handle(ctx, s, &events.Connected{})
	if st := rep.next(t); st.State != status.Ready {
		t.Errorf("logged in: %+v", st)
	}
	a.handle(ctx, s, &events.Disconnected{})
	if st := rep.next(t); st.State != status.Degraded {
		t.Errorf("dropped after the login: %+v", st)
	}
}

// TestConnectionStates: connected → ready; a dropped connection of a
// linked device is degraded (whatsmeow reconnects by itself); one of a
// device still linking ends linking.
func TestConnectionStates(t *testing.T) {
	t.Parallel()
	a, s, rep, _ := testAdapter(t, nil)
	ctx := t.Context()
	a.handle(ctx, s, &events.Disconnected{})
	if e := ended(t, s); e.kind != endQRTimeout {
		t.Fatalf("disconnect while linking: %v", e.kind)
	}
	a.handle(ctx, s, &events.Connected{})
	if st := rep.next(t); st.State != status.Ready {
		t.Fatalf("connected: %+v", st)
	}
	if a.connectedAt.Load() == 0 || !a.cutoff().Equal(a.now().Add(-DefaultBacklogMargin)) {
		t.Errorf("cutoff %v", a.cutoff())
	}
	a.handle(ctx, s, &events.Disconnected{})
	if st := rep.next(t); st.State != status.Degraded || !strings.Contains(st.Message, "reconnecting by itself") {
		t.Errorf("dropped: %+v", st)
	}
	if a.connectedAt.Load() != 0 {
		t.Error("still counted as connected")
	}
	a.handle(ctx, s, &events.KeepAliveTimeout{ErrorCount: 2})
	if st := rep.next(t); st.State != status.Degraded {
		t.Errorf("keepalive timeout: %+v", st)
	}
	a.handle(ctx, s, &events.KeepAliveRestored{})
	if st := rep.next(t); st.State != status.Ready {
		t.Errorf("keepalive restored: %+v", st)
	}
	// Events of a session that is over change nothing.
	old := s
	a.sess.Store(newSession(whatsmeow.NewClient(a.container.NewDevice(), nil)))
	a.handle(ctx, old, &events.LoggedOut{})
	select {
	case e := <-old.end:
		t.Errorf("an old session's event ended it: %v", e.kind)
	default:
	}
	if all := rep.All(); len(all) > rep.taken {
		t.Errorf("an old session's event reported %+v", all[rep.taken:])
	}
}

// recorder is an inbox that records what the plugin delivers.
type recorder struct {
	mu   sync.Mutex
	msgs []string
	fail bool
}

func (r *recorder) Deliver(_ context.Context, msgs ...channel.InboundMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return context.Canceled
	}
	for _, m := range msgs {
		r.msgs = append(r.msgs, m.ChatID+" "+m.Text)
	}
	return nil
}

// TestMessageAck: the handler reports success only when the host stored
// the message, so that whatsmeow sends the receipt only then; a filtered
// message is acknowledged without delivery.
func TestMessageAck(t *testing.T) {
	t.Parallel()
	a, s, _, _ := testAdapter(t, map[string]any{"read_receipts": false})
	rec := &recorder{}
	a.inbox = rec
	ann := types.NewJID("15550000002", types.DefaultUserServer)
	evt := msgEvt(ann, ann, types.EmptyJID, false, txt("hello"))
	evt.Info.Timestamp = a.now()
	if !a.handle(t.Context(), s, evt) {
		t.Fatal("stored message reported as failed")
	}
	rec.fail = true
	evt2 := msgEvt(ann, ann, types.EmptyJID, false, txt("again"))
	evt2.Info.ID, evt2.Info.Timestamp = "3EB0BBBB", a.now()
	if a.handle(t.Context(), s, evt2) {
		t.Fatal("a message the host did not store reported as handled: WhatsApp would not deliver it again")
	}
	var logged strings.Builder
	a.log = slog.New(slog.NewTextHandler(&logged, nil))
	old := msgEvt(ann, ann, types.EmptyJID, false, txt("backlog"))
	old.Info.Timestamp = a.now().Add(-time.Hour)
	if !a.handle(t.Context(), s, old) {
		t.Fatal("a backlog message must be acknowledged (not redelivered)")
	}
	// Not answered by policy, and said at INFO with what to change.
	if l := logged.String(); !strings.Contains(l, "level=INFO") || !strings.Contains(l, "backlog_margin") || !strings.Contains(l, "age=1h0m0s") {
		t.Errorf("backlog not reported to the operator: %q", l)
	}
	if strings.Join(rec.msgs, ";") != "+15550000002 hello" {
		t.Errorf("delivered %q", rec.msgs)
	}
	if _, ok := a.recent.get(evt.Info.ID); !ok {
		t.Error("the delivered message is not remembered for quoting")
	}
}
