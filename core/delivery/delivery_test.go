package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/sessionkey"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// Delivery's rules run in-process: a recording fake channel behind the
// Channels port, a fake clock that records every wait and lets it pass at
// once, and the real SQLite outbox.

type sent struct {
	op, text, replyTo string
	format            channel.Format
	msgID             string
	buttons           string   // the buttons' ids, "|" between them
	media             []string // the paths of the files attached
	rendered          *channel.Rendered
}

// fakeChannel records calls in order and fails Send as scripted.
type fakeChannel struct {
	mu       sync.Mutex
	desc     pluginclient.Description
	calls    []sent
	typing   []bool  // each SetTyping, in order
	sendErrs []error // consumed one per Send; nil entries succeed
	editErr  error
	// editErrs are consumed one per Edit before editErr applies; nil
	// entries succeed.
	editErrs []error
	// answersLost: the next sends reach the chat (recorded as "send") but
	// their answer is lost (CodeUncertain), as when the connection breaks
	// after the request was written.
	answersLost int
	n           int
	// onSend, when set, runs at the start of each Send (outside the lock).
	onSend func(req channel.SendRequest)
	// down, while open, makes the channel not ready (a plugin degraded
	// or restarting); waiting, when set, hears each WaitReady that waits.
	down, waiting chan struct{}
}

func (f *fakeChannel) Ready(string) (pluginclient.Description, bool) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	return f.desc, down == nil || closed(down)
}

func (f *fakeChannel) WaitReady(ctx context.Context, _ string) (pluginclient.Description, error) {
	f.mu.Lock()
	down, waiting := f.down, f.waiting
	f.mu.Unlock()
	if down == nil || closed(down) {
		return f.desc, nil
	}
	if waiting != nil {
		waiting <- struct{}{}
	}
	select {
	case <-down:
		return f.desc, nil
	case <-ctx.Done():
		return pluginclient.Description{}, ctx.Err()
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (f *fakeChannel) Send(_ context.Context, _ string, req channel.SendRequest) (channel.SendResponse, error) {
	if f.onSend != nil {
		f.onSend(req)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sendErrs) > 0 {
		err := f.sendErrs[0]
		f.sendErrs = f.sendErrs[1:]
		if err != nil {
			f.calls = append(f.calls, sent{op: "send-failed", text: req.Text, format: req.Format, rendered: req.Rendered})
			return channel.SendResponse{}, err
		}
	}
	f.n++
	id := fmt.Sprint(f.n)
	var media []string
	for _, m := range req.Media {
		media = append(media, m.Path)
	}
	f.calls = append(f.calls, sent{op: "send", text: req.Text, format: req.Format, replyTo: req.ReplyToMessageID, msgID: id, media: media, buttons: buttonIDs(req.Buttons), rendered: req.Rendered})
	if f.answersLost > 0 {
		f.answersLost--
		return channel.SendResponse{}, &channel.Error{Code: channel.CodeUncertain, Message: "connection reset after the request was written"}
	}
	return channel.SendResponse{MessageIDs: []string{id}}, nil
}

func (f *fakeChannel) Edit(_ context.Context, _ string, req channel.EditRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, sent{op: "edit", text: req.Text, format: req.Format, msgID: req.MessageID, buttons: buttonIDs(req.Buttons), rendered: req.Rendered})
	if len(f.editErrs) > 0 {
		err := f.editErrs[0]
		f.editErrs = f.editErrs[1:]
		return err
	}
	return f.editErr
}

func buttonIDs(rows [][]channel.Button) string {
	var ids []string
	for _, r := range rows {
		for _, b := range r {
			ids = append(ids, b.ID)
		}
	}
	return strings.Join(ids, "|")
}

// React fails at once while the channel is down, as pluginhost's does.
func (f *fakeChannel) React(_ context.Context, _ string, req channel.ReactRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down != nil && !closed(f.down) {
		return errors.New("plugin tg is not ready")
	}
	f.calls = append(f.calls, sent{op: "react", text: req.Emoji, msgID: req.MessageID})
	return nil
}

func (f *fakeChannel) SetTyping(_ context.Context, _ string, req channel.TypingRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.typing = append(f.typing, req.On)
	return nil
}

func (f *fakeChannel) typings() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.typing...)
}

func (f *fakeChannel) log() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.calls...)
}

// fakeClock records the waits and lets each pass at once. Delivery waits
// only with After (tstime.Std stands in for the rest of the clock).
type fakeClock struct {
	tstime.Std
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *fakeClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

type fixture struct {
	t     *testing.T
	db    *sqlite.DB
	ch    *fakeChannel
	clock *fakeClock
	d     *Dispatcher
	n     int
}

func newFixture(t *testing.T, limit int) *fixture {
	t.Helper()
	db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, clock: &fakeClock{now: time.Unix(1_800_000_000, 0)},
		ch: &fakeChannel{desc: pluginclient.Description{Channel: true, Edit: true, Typing: true, Capabilities: channel.Capabilities{MaxTextLength: limit, Markup: channel.MarkupMarkdown}}}}
	f.d = New(Options{Channels: f.ch, Store: db, Clock: f.clock})
	t.Cleanup(func() { f.d.Close(); _ = db.Close() })
	return f
}

// entry accepts a message and starts it, as a turn would.
func (f *fixture) entry() int64 {
	f.t.Helper()
	f.n++
	ctx := context.Background()
	res, err := f.db.Accept(ctx, store.Inbound{Instance: "tg", ChatID: "1", MessageID: fmt.Sprint(f.n), Message: []byte(`{}`)})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.Enqueue(ctx, res.ID, "k"); err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.Start(ctx, res.ID); err != nil {
		f.t.Fatal(err)
	}
	return res.ID
}

// draft starts a draft for entry id of session k, nothing shown yet.
func (f *fixture) draft(id int64) *Draft {
	return f.d.NewDraft(sk("k"), id, tgt, store.Live{})
}

// deliver delivers the Markdown reply text to entry id of session k.
func (f *fixture) deliver(id int64, text string) {
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: text, Format: channel.FormatMarkdown})
}

// wantState fails the test unless entry id is in state want.
func (f *fixture) wantState(id int64, want store.State) {
	f.t.Helper()
	if got := f.state(id); got != want {
		f.t.Errorf("entry %d is %s, want %s", id, got, want)
	}
}

// state is entry id's state in the store.
func (f *fixture) state(id int64) store.State {
	f.t.Helper()
	return sqlitetest.Entry(f.t, f.db, id).State
}

var tgt = message.Target{Instance: "tg", ChatID: "1"}

func TestChunksInOrderThenDone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	id := f.entry()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "one two three four five six seven eight nine ten", Format: channel.FormatMarkdown, ReplyTo: "m9"})
	calls := f.ch.log()
	if len(calls) < 3 {
		t.Fatalf("expected the reply split over several messages: %+v", calls)
	}
	var joined []string
	for i, c := range calls {
		if c.op != "send" || len([]rune(c.text)) > 20 {
			t.Fatalf("call %d: %+v", i, c)
		}
		if (i == 0) != (c.replyTo == "m9") {
			t.Errorf("only the first chunk replies to the message: %+v", c)
		}
		joined = append(joined, c.text)
	}
	if got := strings.Join(joined, " "); got != "one two three four five six seven eight nine ten" {
		t.Errorf("chunks out of order or lost: %q", got)
	}
	if st := f.state(id); st != store.StateDone {
		t.Errorf("entry %s after every chunk was sent, want done", st)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.sendErrs = []error{
		&channel.Error{Code: channel.CodeRateLimited, RetryAfter: 7 * time.Second},
		&channel.Error{Code: channel.CodeUnavailable},
		errors.New("connection reset"),
		nil,
	}
	id := f.entry()
	f.deliver(id, "hello")
	want := []time.Duration{7 * time.Second, time.Second, 2 * time.Second}
	if got := f.clock.recorded(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v (retry_after first, then the backoff doubling from where it was)", got, want)
	}
	f.wantState(id, store.StateDone)
}

func TestFormattingRejectedFallsBackToPlainAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.sendErrs = []error{&channel.Error{Code: channel.CodeFormattingRejected}}
	f.d.Deliver(Reply{Key: sk("k"), ID: f.entry(), Target: tgt, Text: "*bold*", Format: channel.FormatMarkdown})
	calls := f.ch.log()
	if len(calls) != 2 || calls[1].op != "send" || calls[1].format != channel.FormatPlain {
		t.Fatalf("calls %+v", calls)
	}
	if w := f.clock.recorded(); len(w) != 0 {
		t.Errorf("the plain retry waits for nothing: %v", w)
	}
}

// Every markdown text is sent with its rendering for the channel's markup
// (SendRequest.Rendered; a reply that fits one message the one its measure
// made), so the plugin need not parse it: the bundled ones link no
// markdown parser. The pieces of a cut reply and the edit of a draft into
// the reply carry theirs too; a plain retry and a channel that shows no
// markup carry none.
func TestSendCarriesTheMeasuredRendering(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Capabilities.Markup = channel.MarkupHTMLSubset
	f.d.Deliver(Reply{Key: sk("k"), ID: f.entry(), Target: tgt, Text: "**bold** & `x`", Format: channel.FormatMarkdown})
	f.d.Send(sk("k"), tgt, "_also_ here", channel.FormatMarkdown)
	want := []channel.Rendered{
		{Markup: channel.MarkupHTMLSubset, Text: "<b>bold</b> &amp; <code>x</code>", Visible: "bold & x"},
		{Markup: channel.MarkupHTMLSubset, Text: "<i>also</i> here", Visible: "also here"},
	}
	calls := f.ch.log()
	if len(calls) != len(want) {
		t.Fatalf("calls %+v", calls)
	}
	for i, c := range calls {
		if c.rendered == nil || *c.rendered != want[i] {
			t.Errorf("send %d (%q) carries %+v, want %+v", i, c.text, c.rendered, want[i])
		}
	}

	cut := newFixture(t, 20)
	cut.ch.desc.Capabilities.Markup = channel.MarkupHTMLSubset
	cut.d.Deliver(Reply{Key: sk("k"), ID: cut.entry(), Target: tgt, Text: "one two three four five six seven eight nine ten", Format: channel.FormatMarkdown})
	pieces := cut.ch.log()
	if len(pieces) < 2 {
		t.Fatalf("the reply is not cut: %+v", pieces)
	}
	for i, c := range pieces {
		if want := markup.RenderFor(c.text, channel.MarkupHTMLSubset); c.rendered == nil || *c.rendered != *want {
			t.Errorf("piece %d of a cut reply carries %+v, want %+v", i, c.rendered, want)
		}
	}

	edited := newFixture(t, 100)
	edited.ch.desc.Capabilities.Markup = channel.MarkupHTMLSubset
	id := edited.entry()
	dr := edited.d.NewDraft(sk("k"), id, tgt, store.Live{})
	dr.Update("Hel")
	dr.Stop()
	edited.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "**Hello** world", Format: channel.FormatMarkdown, Draft: dr})
	calls = edited.ch.log()
	if last := calls[len(calls)-1]; last.op != "edit" || last.rendered == nil || last.rendered.Text != "<b>Hello</b> world" {
		t.Errorf("the draft's edit into the reply: %+v", calls)
	}

	plain := newFixture(t, 100)
	plain.ch.desc.Capabilities.Markup = channel.MarkupHTMLSubset
	plain.ch.sendErrs = []error{&channel.Error{Code: channel.CodeFormattingRejected}}
	plain.d.Deliver(Reply{Key: sk("k"), ID: plain.entry(), Target: tgt, Text: "*bold*", Format: channel.FormatMarkdown})
	if calls := plain.ch.log(); len(calls) != 2 || calls[0].rendered == nil || calls[1].format != channel.FormatPlain || calls[1].rendered != nil {
		t.Errorf("the plain retry: %+v", calls)
	}

	none := newFixture(t, 100)
	none.ch.desc.Capabilities.Markup = channel.MarkupNone
	none.d.Deliver(Reply{Key: sk("k"), ID: none.entry(), Target: tgt, Text: "**bold** & `x`", Format: channel.FormatMarkdown})
	if calls := none.ch.log(); len(calls) != 1 || calls[0].text != "bold & x" || calls[0].format != channel.FormatPlain || calls[0].rendered != nil {
		t.Errorf("a channel without markup: %+v", calls)
	}
}

func TestPermanentFailureFailsTheEntryAndTellsTheUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	f.ch.sendErrs = []error{nil, &channel.Error{Code: channel.CodeForbidden}}
	id := f.entry()
	f.deliver(id, "one two three four five six seven eight nine ten")
	calls := f.ch.log()
	last := calls[len(calls)-1]
	if last.text != "(Part of the reply could not be delivered.)" || calls[1].op != "send-failed" || len(calls) != 3 {
		t.Fatalf("calls %+v", calls)
	}
	f.wantState(id, store.StateFailed)
	if w := f.clock.recorded(); len(w) != 0 {
		t.Errorf("a permanent error is not retried: %v", w)
	}
}

func TestRetriesEndAfterSixAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	for range sendAttempts {
		f.ch.sendErrs = append(f.ch.sendErrs, &channel.Error{Code: channel.CodeUnavailable})
	}
	id := f.entry()
	f.deliver(id, "hello")
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	if got := f.clock.recorded(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	f.wantState(id, store.StateFailed)
}

func TestDraftIsEditedIntoTheReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	id := f.entry()
	dr := f.draft(id)
	dr.Update("Hel")
	dr.Update("Hello wor") // within the second: held back
	dr.Stop()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "Hello world", Format: channel.FormatMarkdown, Draft: dr})
	calls := f.ch.log()
	if len(calls) != 2 || calls[0].op != "send" || calls[0].text != "Hel" || calls[1].op != "edit" || calls[1].msgID != "1" || calls[1].text != "Hello world" {
		t.Fatalf("calls %+v", calls)
	}
	f.wantState(id, store.StateDone) // the draft's edit delivers the reply
}

func TestDraftEditFailureSendsTheReplyNormally(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.editErr = &channel.Error{Code: channel.CodeUnsupported}
	id := f.entry()
	dr := f.draft(id)
	dr.Update("Hel")
	dr.Stop()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "Hello world", Format: channel.FormatMarkdown, Draft: dr})
	calls := f.ch.log()
	// send the draft, the refused final edit, one more try (a lost answer
	// would be retried), then the reply as a new message.
	if n := len(calls); n != 4 || calls[2].op != "edit" || calls[3].op != "send" || calls[3].text != "Hello world" {
		t.Fatalf("calls %+v", calls)
	}
}

func TestEmptyReplyIsRecordedAsDone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	id := f.entry()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt})
	if len(f.ch.log()) != 0 || f.state(id) != store.StateDone {
		t.Fatalf("calls %+v state %s", f.ch.log(), f.state(id))
	}
}

func TestLimitUsesTheSmallerOfConfigAndChannel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30)
	if got := f.d.Limit(context.Background(), "tg"); got != 30 {
		t.Errorf("channel limit: %d", got)
	}
	f.d.SetSettings(Settings{TextLimit: 10})
	if got := f.d.Limit(context.Background(), "tg"); got != 10 {
		t.Errorf("configured limit: %d", got)
	}
	f.ch.desc.Capabilities = channel.Capabilities{MaxTextLength: 300, LengthUnit: channel.LengthBytes, Markup: channel.MarkupMarkdown}
	f.d.SetSettings(Settings{TextLimit: 4000})
	if got := f.d.Limit(context.Background(), "tg"); got != 100 {
		t.Errorf("a byte limit allows 3 bytes per unit: %d", got)
	}
}

// TestReactWaitsForTheChannel: while a plugin is not ready for a moment
// (degraded: its polls fail, or restarting), its reactions are still
// known and a reaction waits for it, as a send does, instead of being
// refused as "no reactions" and lost.
func TestReactWaitsForTheChannel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Reactions = true
	if !f.d.CanReact("tg") {
		t.Fatal("a ready channel with reactions: CanReact false")
	}
	f.ch.mu.Lock()
	f.ch.down, f.ch.waiting = make(chan struct{}), make(chan struct{}, 1)
	f.ch.mu.Unlock()
	if !f.d.CanReact("tg") {
		t.Error("a channel not ready for a moment lost its reactions")
	}
	done := make(chan error, 1)
	go func() { done <- f.d.React(tgt, "5", "👍") }()
	select {
	case <-f.ch.waiting:
	case err := <-done:
		t.Fatalf("the reaction did not wait for the channel: %v", err)
	}
	close(f.ch.down)
	if err := <-done; err != nil {
		t.Fatalf("react: %v", err)
	}
	if c := f.ch.log(); len(c) != 1 || c[0].op != "react" || c[0].text != "👍" || c[0].msgID != "5" {
		t.Fatalf("calls %+v", c)
	}
}

// The turn's bookkeeping (Reply.Session) is written in the reply's
// record; a record the journal refuses gives it back to the turn unwritten.
func TestReplyCarriesTheTurnsBookkeeping(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	ctx := context.Background()
	turn := func() *store.PendingSession {
		p := store.NewPendingSession()
		go p.Set(&store.SessionUpdate{Key: "k", Fn: func(s *store.Session, _ bool) error { s.Turns++; return nil }})
		return p
	}
	id := f.entry()
	p := turn()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "hello", Format: channel.FormatMarkdown, Session: p})
	if s, err := f.db.Session(ctx, "k"); err != nil || s.Turns != 1 {
		t.Fatalf("session after the reply: %+v, %v; want the turn counted", s, err)
	}
	if u := p.Take(); u != nil {
		t.Fatal("the bookkeeping written with the reply is still there to write")
	}
	// The entry is done: a second reply to it is refused.
	p = turn()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "again", Format: channel.FormatMarkdown, Session: p})
	if s, _ := f.db.Session(ctx, "k"); s.Turns != 1 {
		t.Fatalf("a refused reply wrote the bookkeeping: %d turns", s.Turns)
	}
	if u := p.Take(); u == nil {
		t.Fatal("the bookkeeping of a refused reply was not given back to the turn")
	}
}

// sk is the key of a test session named chat.
func sk(chat string) sessionkey.Key {
	return sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: chat}
}
