package turn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

// A turn's rules run in-process: an agent whose turns are already
// finished (runner.FinishedTurn), recording output and hooks, the real
// SQLite session store and an injected clock.

type fakeAgent struct {
	mu      sync.Mutex
	reqs    []runner.TurnRequest
	stopped []string
	result  runner.Result
	events  []runner.Event
	// onRun, when set, runs as a turn starts.
	onRun func()
	// turn, when set, is what Run returns (a turn the test feeds).
	turn *runner.Turn
}

func (a *fakeAgent) Run(_ context.Context, req runner.TurnRequest) (*runner.Turn, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.onRun != nil {
		a.onRun()
	}
	a.reqs = append(a.reqs, req)
	if a.turn != nil {
		return a.turn, nil
	}
	return runner.FinishedTurn(a.result, a.events...), nil
}
func (a *fakeAgent) Steer(string, string) (bool, error) { return false, nil }
func (a *fakeAgent) CanSteer() bool                     { return false }
func (a *fakeAgent) Stop(key string)                    { a.stopped = append(a.stopped, key) }

type fakeOutput struct {
	mu      sync.Mutex
	sent    []string
	typed   int
	edits   bool
	drafts  []store.Live // the prev of each NewDraft
	draft   Draft        // returned by NewDraft when set
	replies []Reply      // the final replies
	// record, when set, records a final reply (in the store).
	record func(Reply)
}

func (o *fakeOutput) Reply(r Reply) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.replies = append(o.replies, r)
	if o.record != nil {
		o.record(r)
	}
}

func (o *fakeOutput) CanEdit(string) bool  { return o.edits }
func (o *fakeOutput) CanReact(string) bool { return true }
func (o *fakeOutput) React(_ message.Target, id, emoji string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, "react "+id+" "+emoji)
	return nil
}

// testKey is the session the fixture's turns run in.
var testKey = sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "tg:direct:5"}

// CheckFile accepts a path inside /ws (a stand-in for the delivery's
// check).
func (o *fakeOutput) CheckFile(_ sessionkey.Key, _, path string) (string, error) {
	p := filepath.Clean(filepath.Join("/ws", path))
	if !strings.HasPrefix(p, "/ws/") {
		return "", errors.New("it is outside the workspace")
	}
	return p, nil
}
func (o *fakeOutput) Typing(message.Target, time.Duration) func() {
	o.mu.Lock()
	o.typed++
	o.mu.Unlock()
	return func() {}
}
func (o *fakeOutput) Send(_ sessionkey.Key, _ message.Target, text string, _ channel.Format) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, text)
	return []string{"1"}
}
func (o *fakeOutput) SendBlock(key sessionkey.Key, _ int64, _ int, tgt message.Target, text string) bool {
	return len(o.Send(key, tgt, text, channel.FormatMarkdown)) > 0
}
func (o *fakeOutput) NewDraft(_ sessionkey.Key, _ int64, _ message.Target, prev store.Live) Draft {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drafts = append(o.drafts, prev)
	if o.draft != nil {
		return o.draft
	}
	return nopDraft{}
}

// nopDraft shows nothing.
type nopDraft struct{}

func (nopDraft) Update(string)                                   {}
func (nopDraft) Stop()                                           {}
func (nopDraft) TakeFirst(string) (string, bool)                 { return "", false }
func (nopDraft) MessageID() string                               { return "" }
func (nopDraft) Interrupted(string)                              {}
func (nopDraft) Fits(string, channel.Format) bool                { return false }
func (nopDraft) Card(string, channel.Format, [][]channel.Button) {}
func (nopDraft) Final(string) bool                               { return false }

type fakeChannels struct{}

func (fakeChannels) Known(instance string) bool { return instance == "tg" }
func (fakeChannels) Download(context.Context, string, int64, string, int64, io.Writer) (channel.MediaInfo, error) {
	return channel.MediaInfo{}, errors.New("offline")
}

type fakeHooks map[string]hook.Response

func (h fakeHooks) BeforeAgentStart(_ context.Context, instance string, _ hook.Request, _ time.Duration) (hook.Response, bool, error) {
	r, ok := h[instance]
	if instance == "broken" {
		return hook.Response{}, false, errors.New("boom")
	}
	return r, ok, nil
}

type fixture struct {
	opts  Options
	t     *testing.T
	db    *sqlite.DB
	agent *fakeAgent
	out   *fakeOutput
	turns *Turns
	now   time.Time
	n     int
}

func newFixture(t *testing.T, set Settings) *fixture {
	t.Helper()
	return newFixtureWith(t, set, nil)
}

// newFixtureWith is newFixture with opts changed by with before New.
func newFixtureWith(t *testing.T, set Settings, with func(*Options)) *fixture {
	t.Helper()
	db := sqlitetest.Open(t, t.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	f := &fixture{t: t, db: db, agent: &fakeAgent{result: runner.Result{Text: "hello back"}}, out: &fakeOutput{}, now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	hooks := fakeHooks{"clock": {PrependContext: "It is noon."}, "weather": {PrependContext: "Sunny.", SystemPrompt: "Be brief."}}
	opts := Options{Agent: f.agent, Channels: fakeChannels{}, Hooks: hooks, Output: f.out, Store: db, Settings: set, Meta: session.NewCache(0),
		MemoryFlush: MemoryFlush{Disabled: true}, Now: func() time.Time { return f.now }}
	if with != nil {
		with(&opts)
	}
	f.opts = opts
	f.turns = New(opts)
	return f
}

// request accepts and queues a message of instance, returning the turn's
// request over it.
func (f *fixture) request(instance, body string) Request {
	f.t.Helper()
	f.n++
	m := message.Message{Instance: instance, Channel: "telegram", ChatType: channel.ChatDirect, ChatID: "5", MessageID: "m" + string(rune('0'+f.n)),
		Sender: channel.Sender{ID: "5", Name: "Ann"}, Body: body, Timestamp: f.now, From: instance + ":5"}
	return f.requestOf(m)
}

// requestOf accepts and queues m, returning the turn's request over it.
func (f *fixture) requestOf(m message.Message) Request {
	f.t.Helper()
	ctx := context.Background()
	instance := m.Instance
	res, err := f.db.Accept(ctx, store.Inbound{Instance: instance, ChatID: "5", MessageID: m.MessageID, Message: message.Encode(&m)})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.Enqueue(ctx, res.ID, testKey.String()); err != nil {
		f.t.Fatal(err)
	}
	e, _ := f.db.Entry(ctx, res.ID)
	return Request{Key: testKey, Entries: []store.Entry{e}, Start: func(ctx context.Context) error { return f.db.Start(ctx, res.ID) }, AbortReason: func() string { return "" }}
}

func TestTurnPromptHooksAndReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{HookOrder: []string{"weather", "broken", "clock", "not-a-hook"}, Streaming: StreamOff})
	o := f.turns.Run(context.Background(), f.request("tg", "hi there"))
	if !o.Deliver || o.Text != "hello back" || o.Format != channel.FormatMarkdown || o.Target != (message.Target{Instance: "tg", ChatID: "5"}) {
		t.Fatalf("outcome %+v", o)
	}
	// The final reply goes out through the Output port, like the blocks.
	if r := f.out.replies; len(r) != 1 || r[0].Text != "hello back" || r[0].Key != testKey || r[0].Format != channel.FormatMarkdown {
		t.Errorf("final replies %+v", r)
	}
	req := f.agent.reqs[0]
	if !req.NewSession || req.SessionID == "" {
		t.Errorf("first turn starts a new claude session: %+v", req)
	}
	if !strings.HasPrefix(req.Prompt, "Sunny.\n\nIt is noon.\n\n[Telegram Ann") || !strings.Contains(req.Prompt, "hi there") {
		t.Errorf("hooks in config order before the envelope, the failing one skipped: %q", req.Prompt)
	}
	if req.ExtraSystemPrompt != "Be brief." {
		t.Errorf("system prompt %q", req.ExtraSystemPrompt)
	}
	if f.out.typed != 1 {
		t.Errorf("typing shown %d times", f.out.typed)
	}
	s, _ := f.db.Session(context.Background(), testKey.String())
	if s.Turns != 1 || s.ClaudeSessionID != req.SessionID {
		t.Errorf("session after the turn: %+v", s)
	}
	// The next turn resumes the same claude session.
	f.now = f.now.Add(time.Minute)
	f.turns.Run(context.Background(), f.request("tg", "again"))
	if r := f.agent.reqs[1]; r.NewSession || r.SessionID != req.SessionID {
		t.Errorf("second turn: %+v", r)
	}
}

// Turns that never completed (claude missing) leave no conversation: the
// first turn that runs starts a new claude session instead of resuming one
// that does not exist (which said "the earlier conversation could not be
// restored" on the first real reply).
func TestFailedTurnsLeaveTheSessionNew(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	f.agent.result = runner.Result{Err: &runner.Error{Kind: runner.KindCLINotFound, Notice: "claude is not installed"}}
	f.turns.Run(context.Background(), f.request("tg", "one"))
	f.turns.Run(context.Background(), f.request("tg", "two"))
	f.agent.result = runner.Result{Text: "hello"}
	f.turns.Run(context.Background(), f.request("tg", "three"))
	for i, r := range f.agent.reqs {
		if !r.NewSession {
			t.Errorf("turn %d resumes a session no turn completed: %+v", i+1, r)
		}
	}
	f.turns.Run(context.Background(), f.request("tg", "four"))
	if r := f.agent.reqs[3]; r.NewSession || r.SessionID != f.agent.reqs[2].SessionID {
		t.Errorf("after a completed turn the session is resumed: %+v", r)
	}
}

// markDraft records Interrupted.
type markDraft struct {
	nopDraft
	notes []string
}

func (d *markDraft) Interrupted(note string) { d.notes = append(d.notes, note) }

// A stopped turn marks its draft as cut off and delivers nothing more.
func TestStoppedTurnMarksItsDraft(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamDraft})
	f.out.edits = true
	d := &markDraft{}
	f.out.draft = d
	f.agent.events = []runner.Event{{Kind: runner.EventText, Text: "partial"}}
	f.agent.result = runner.Result{Err: &runner.Error{Kind: runner.KindAborted, Notice: "stopped"}}
	o := f.turns.Run(context.Background(), f.request("tg", "long question"))
	if len(d.notes) != 1 || d.notes[0] != "(stopped)" {
		t.Errorf("draft notes %q", d.notes)
	}
	if o.Text != "" {
		t.Errorf("a stopped turn delivers %q", o.Text)
	}
}

// {model} in response_prefix is the model that answered.
func TestResponsePrefixNamesTheAnsweringModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff, ResponsePrefix: "[{model}|{modelFull}]", Model: "opus"})
	f.agent.result = runner.Result{Text: "hi", Model: "claude-sonnet-5-1"}
	if o := f.turns.Run(context.Background(), f.request("tg", "q")); o.Text != "[sonnet|claude-sonnet-5-1] hi" {
		t.Errorf("reply %q", o.Text)
	}
}

// A follow-up that came while the previous turn ran carries "+elapsed"
// from the previous message, not from the end of that turn.
func TestQueuedFollowUpCarriesElapsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	first := f.request("tg", "one")
	f.now = f.now.Add(2 * time.Minute) // the second message arrives
	second := f.request("tg", "two")
	f.now = f.now.Add(3 * time.Minute) // the first turn ends after it
	f.turns.Run(context.Background(), first)
	f.turns.Run(context.Background(), second)
	if p := f.agent.reqs[1].Prompt; !strings.Contains(p, "+2m") {
		t.Errorf("follow-up prompt %q lacks +2m", p)
	}
}

// A session's /model and /effort go with every turn of it (the memory
// flush's included) and survive /new.
func TestOverridesReachTheAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	ctx := context.Background()
	f.turns.Run(ctx, f.request("tg", "one"))
	if _, err := f.turns.SetOverrides(ctx, testKey, func(o *session.Overrides) error { o.Model, o.Effort = "sonnet", "max"; return nil }); err != nil {
		t.Fatal(err)
	}
	f.turns.Run(ctx, f.request("tg", "two"))
	m := message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "5"}
	f.turns.Reset(ctx, testKey, &m, "/new")
	f.turns.Run(ctx, f.request("tg", "three"))
	r := f.agent.reqs
	if r[0].Model != "" || r[0].Effort != "" || r[1].Model != "sonnet" || r[1].Effort != "max" || r[2].Model != "sonnet" || r[2].Effort != "max" {
		t.Errorf("requests %+v", r)
	}
	if s, _ := f.db.Session(ctx, testKey.String()); storedMeta(s).Overrides() != (session.Overrides{Model: "sonnet", Effort: "max"}) {
		t.Errorf("stored %+v", storedMeta(s).Overrides())
	}
	// A cleared override is "--model default" (claude resumes on the model
	// it last used otherwise), unless a model is configured.
	if _, err := f.turns.SetOverrides(ctx, testKey, func(o *session.Overrides) error { o.Model = "default"; return nil }); err != nil {
		t.Fatal(err)
	}
	f.turns.Run(ctx, f.request("tg", "four"))
	f.turns.SetSettings(Settings{Streaming: StreamOff, Model: "opus"})
	f.turns.Run(ctx, f.request("tg", "five"))
	if r := f.agent.reqs; r[3].Model != "default" || r[4].Model != "" {
		t.Errorf("cleared override: %q then %q", r[3].Model, r[4].Model)
	}
}

// /compact runs claude's own /compact in the session and says what came
// of it; with no conversation yet nothing runs.
func TestCompact(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	ctx := context.Background()
	if o := f.turns.Run(ctx, f.request("tg", "/compact")); !strings.Contains(o.Text, "Nothing to compact yet") || len(f.agent.reqs) != 0 {
		t.Fatalf("fresh session: %q, %d runs", o.Text, len(f.agent.reqs))
	}
	f.turns.Run(ctx, f.request("tg", "hello"))
	f.agent.result = runner.Result{Compacted: true}
	o := f.turns.Run(ctx, f.request("tg", "/compact"))
	if r := f.agent.reqs[len(f.agent.reqs)-1]; r.Prompt != "/compact" {
		t.Errorf("prompt %q", r.Prompt)
	}
	if o.Text != "Conversation compacted: claude goes on from a summary of it." {
		t.Errorf("reply %q", o.Text)
	}
}

// A compaction during the memory-flush turn is counted, so the new
// compaction cycle gets its own flush.
func TestCompactionDuringTheFlushIsCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	f.turns.opts.MemoryFlush = MemoryFlush{ContextWindow: 100_000}
	ctx := context.Background()
	f.agent.result = runner.Result{Text: "big", Usage: runner.Usage{InputTokens: 90_000}, ContextWindow: 100_000}
	f.turns.Run(ctx, f.request("tg", "one"))
	f.agent.result = runner.Result{Text: "NO_REPLY", Compacted: true, Usage: runner.Usage{InputTokens: 5_000}, ContextWindow: 100_000}
	f.turns.Run(ctx, f.request("tg", "two")) // the flush runs first, and compacts
	if n := len(f.agent.reqs); n != 3 || !strings.Contains(f.agent.reqs[1].Prompt, "memory flush") {
		t.Fatalf("%d runs: %+v", n, f.agent.reqs)
	}
	s, _ := f.db.Session(ctx, testKey.String())
	var meta session.Meta
	_ = json.Unmarshal(s.Chat, &meta)
	// One compaction in the flush turn, one reported by the turn after it
	// (the fake reports Compacted for both).
	if meta.Compactions != 2 || s.MemoryFlushCycle != 1 {
		t.Errorf("compactions %d, flush cycle %d", meta.Compactions, s.MemoryFlushCycle)
	}
}

// /new keeps the old session as an earlier one; /switch brings it back
// (the next turn resumes it) and keeps the one it leaves.
func TestSwitchBackToAnEarlierSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	ctx := context.Background()
	m := message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "5"}
	f.turns.Run(ctx, f.request("tg", "first"))
	first := f.agent.reqs[0].SessionID
	f.turns.Reset(ctx, testKey, &m, "/new")
	f.turns.Run(ctx, f.request("tg", "second"))
	second := f.agent.reqs[1].SessionID
	s, _ := f.db.Session(ctx, testKey.String())
	if past := storedMeta(s).Past; len(past) != 1 || past[0].ID != first || past[0].Turns != 1 {
		t.Fatalf("past %+v", past)
	}
	if _, err := f.turns.Switch(ctx, testKey, 1); err != nil {
		t.Fatal(err)
	}
	f.turns.Run(ctx, f.request("tg", "third"))
	if r := f.agent.reqs[2]; r.SessionID != first || r.NewSession {
		t.Errorf("after /switch: %+v, want a resume of %s", r, first)
	}
	s, _ = f.db.Session(ctx, testKey.String())
	if past := storedMeta(s).Past; len(past) != 1 || past[0].ID != second {
		t.Errorf("past after the switch %+v", past)
	}
	if _, err := f.turns.Switch(ctx, testKey, 5); err == nil {
		t.Error("switched to a session that does not exist")
	}
}

// A heartbeat's "HEARTBEAT_OK" with a short acknowledgement is not
// delivered, nor streamed; the same text in an ordinary turn is.
func TestHeartbeatAckIsNotDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamBlocks})
	ctx := context.Background()
	f.agent.result = runner.Result{Text: "HEARTBEAT_OK nothing new"}
	f.agent.events = []runner.Event{{Kind: runner.EventText, Text: "HEARTBEAT_OK nothing new"}}
	req := f.request("tg", "heartbeat")
	var m message.Message
	_ = json.Unmarshal(req.Entries[0].Message, &m)
	m.Scheduled = HeartbeatJob
	req.Entries[0].Message = message.Encode(&m)
	if o := f.turns.Run(ctx, req); strings.TrimSpace(o.Text) != "" || len(f.out.sent) != 0 {
		t.Errorf("heartbeat delivered %q, streamed %q", o.Text, f.out.sent)
	}
	if o := f.turns.Run(ctx, f.request("tg", "ordinary")); !strings.Contains(o.Text+strings.Join(f.out.sent, ""), "nothing new") {
		t.Errorf("ordinary turn: %q %q", o.Text, f.out.sent)
	}
}

func TestIdleResetStartsANewSession(t *testing.T) {
	t.Parallel()
	idle := 30.0
	f := newFixture(t, Settings{Streaming: StreamOff})
	f.turns.SetSettings(Settings{Streaming: StreamOff, Reset: resetIdle(idle)})
	f.turns.Run(context.Background(), f.request("tg", "one"))
	f.now = f.now.Add(31 * time.Minute)
	f.turns.Run(context.Background(), f.request("tg", "two"))
	if a, b := f.agent.reqs[0], f.agent.reqs[1]; !b.NewSession || a.SessionID == b.SessionID {
		t.Fatalf("an idle session is replaced: %+v then %+v", a, b)
	}
	if len(f.agent.stopped) != 1 {
		t.Errorf("the old claude process is stopped: %v", f.agent.stopped)
	}
	if len(f.out.sent) != 1 || f.out.sent[0] != "(New conversation: the last one had been idle for more than 30 minutes.)" {
		t.Errorf("the reset is announced once: %q", f.out.sent)
	}
}

func TestDailyResetIsAnnounced(t *testing.T) {
	t.Parallel()
	at := 4.0
	f := newFixture(t, Settings{Streaming: StreamOff})
	f.turns.SetSettings(Settings{Streaming: StreamOff, Location: time.UTC, Reset: sessionreset.Config{Default: &sessionreset.Rule{Mode: sessionreset.ModeDaily, AtHour: &at}}})
	f.turns.Run(context.Background(), f.request("tg", "one")) // noon
	f.now = f.now.Add(17 * time.Hour)                         // 05:00 the next day
	f.turns.Run(context.Background(), f.request("tg", "two"))
	if len(f.out.sent) != 1 || f.out.sent[0] != "(New conversation: conversations start afresh every day at 04:00.)" {
		t.Errorf("notices %q", f.out.sent)
	}
}

func TestBlocksStreamAndTheRestIsDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamBlocks})
	first := strings.Repeat("word ", 250) // past the coalescer's minimum
	f.agent.events = []runner.Event{{Kind: runner.EventText, Text: first}, {Kind: runner.EventText, Text: "last part"}}
	f.agent.result = runner.Result{Text: "last part"} // claude's result is its last text block
	o := f.turns.Run(context.Background(), f.request("tg", "long please"))
	if len(f.out.sent) == 0 || !strings.Contains(strings.Join(f.out.sent, ""), "word word") {
		t.Fatalf("nothing streamed: %q", f.out.sent)
	}
	all := strings.Join(f.out.sent, " ") + " " + o.Text
	if n := strings.Count(all, "word"); n != 250 || strings.Count(all, "last part") != 1 || !strings.HasSuffix(o.Text, "last part") {
		t.Errorf("streamed blocks and the outbox's rest hold the reply once (%d words): %q + %q", n, f.out.sent, o.Text)
	}
}

func TestErrorsBecomeNotices(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	f.turns.Run(context.Background(), f.request("tg", "one"))
	f.agent.result = runner.Result{Err: &runner.Error{Kind: runner.KindPromptTooLong, Notice: "too long"}}
	o := f.turns.Run(context.Background(), f.request("tg", "two"))
	if !strings.Contains(o.Text, "started a new session") || o.Format != channel.FormatPlain {
		t.Errorf("prompt too long: %+v", o)
	}
	if s, _ := f.db.Session(context.Background(), testKey.String()); s.ClaudeSessionID != "" {
		t.Errorf("the session was reset: %+v", s)
	}
	f.agent.result = runner.Result{Err: &runner.Error{Kind: runner.KindOverloaded, Notice: "Claude is overloaded right now."}}
	if o := f.turns.Run(context.Background(), f.request("tg", "three")); o.Text != "Claude is overloaded right now." {
		t.Errorf("notice: %+v", o)
	}
}

func TestUnknownInstanceHaltsTheLane(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{})
	if o := f.turns.Run(context.Background(), f.request("gone", "hi")); !o.Halt || len(f.agent.reqs) != 0 {
		t.Fatalf("outcome %+v, runs %d", o, len(f.agent.reqs))
	}
}

func resetIdle(minutes float64) sessionreset.Config {
	return sessionreset.Config{Default: &sessionreset.Rule{Mode: sessionreset.ModeIdle, IdleMinutes: &minutes}}
}

// A /mode the configuration no longer offers is not passed on.
func TestPermissionModeFallsBackWhenNotOffered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	f.turns.SetSettings(Settings{Streaming: StreamOff, PermissionModes: []string{"acceptEdits"}})
	ctx := context.Background()
	if _, err := f.turns.SetOverrides(ctx, testKey, func(o *session.Overrides) error { o.Mode = "acceptEdits"; return nil }); err != nil {
		t.Fatal(err)
	}
	f.turns.Run(ctx, f.request("tg", "one"))
	f.turns.SetSettings(Settings{Streaming: StreamOff}) // reloaded without it
	f.turns.Run(ctx, f.request("tg", "two"))
	if r := f.agent.reqs; r[0].PermissionMode != "acceptEdits" || r[1].PermissionMode != "" {
		t.Errorf("modes %q, %q", r[0].PermissionMode, r[1].PermissionMode)
	}
}

// storedMeta decodes a stored session's metadata (uncached).
func storedMeta(s store.Session) session.Meta {
	m, _ := (*session.Cache)(nil).Decode(s.Key, s.Chat)
	return m
}

func TestSettingsForAgent(t *testing.T) {
	set := Settings{Workspace: "/main", Model: "sonnet", Models: []string{"sonnet"}, PermissionModes: []string{"plan"}, GroupHistoryLimit: 7,
		Agents: map[string]AgentSettings{"ops": {Workspace: "/ops", Model: "opus", Models: []string{"opus", "haiku"}, Approvals: true}}}
	ops := set.forAgent("ops")
	if ops.Workspace != "/ops" || ops.Model != "opus" || len(ops.Models) != 2 || !ops.Approvals || ops.PermissionModes != nil || ops.GroupHistoryLimit != 7 {
		t.Errorf("ops: %+v", ops)
	}
	for _, id := range []string{"", "main", "gone"} {
		if s := set.forAgent(id); s.Workspace != "/main" || s.Model != "sonnet" || s.Approvals {
			t.Errorf("%q: %+v", id, s)
		}
	}
}

// TestSilentAnswer: claude's NO_REPLY is silence in a group, where not
// answering is a choice; in a direct chat the person asked and would see
// nothing at all, so they are told — unless claude reacted instead.
func TestSilentAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		kind   channel.ChatType
		react  bool
		notice bool
	}{{"direct", channel.ChatDirect, false, true}, {"direct, reacted", channel.ChatDirect, true, false}, {"group", channel.ChatGroup, false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Settings{Streaming: StreamOff})
			f.agent.result = runner.Result{Text: "NO_REPLY"}
			m := message.Message{Instance: "tg", Channel: "telegram", ChatType: tc.kind, ChatID: "5", MessageID: "m1",
				Sender: channel.Sender{ID: "5", Name: "Ann"}, Body: "ok thanks", Timestamp: f.now, From: "tg:5"}
			if tc.react {
				f.agent.onRun = func() {
					if err := f.turns.ReactTo(m.Target(), "👍"); err != nil {
						t.Error(err)
					}
				}
			}
			f.turns.Run(context.Background(), f.requestOf(m))
			var text string
			for _, r := range f.out.replies {
				text += r.Text
			}
			if got := text == noteSilentDirect; got != tc.notice {
				t.Errorf("replies %q, want the notice: %v", text, tc.notice)
			}
			if !tc.notice && text != "" {
				t.Errorf("replies %q, want none", text)
			}
		})
	}
}

// TestRunTakesTheResolvedProfile: a turn runs on the settings its Request
// carries (the composer resolved its agent once), not on a lookup of the
// key's agent; without them Run resolves the key's, and a named agent's
// memory flush is its own (forAgent).
func TestRunTakesTheResolvedProfile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Model: "sonnet", Agents: map[string]AgentSettings{"ops": {Model: "haiku", MemoryFlush: MemoryFlush{Disabled: true}}}})
	profile := f.turns.Profile("")
	profile.PromptSection = chatprompt.Default
	req := f.request("tg", "hi")
	req.Profile = &profile
	f.turns.Run(context.Background(), req)
	f.turns.Run(context.Background(), f.request("tg", "again"))
	f.agent.mu.Lock()
	defer f.agent.mu.Unlock()
	if len(f.agent.reqs) != 2 || !strings.Contains(f.agent.reqs[0].ExtraSystemPrompt, "## Messaging") || f.agent.reqs[1].ExtraSystemPrompt != "" {
		t.Errorf("turns %+v, want the messaging section from the request's profile, then none from the key's agent", f.agent.reqs)
	}
	if ops := f.turns.Profile("ops"); ops.Model != "haiku" || ops.MemoryFlush == nil || !ops.MemoryFlush.Disabled {
		t.Errorf("ops's profile: model %q, memory flush %+v", ops.Model, ops.MemoryFlush)
	}
	if def := f.turns.Profile(""); def.MemoryFlush != nil {
		t.Errorf("the default agent's profile has a memory flush of its own: %+v", def.MemoryFlush)
	}
}

// The reply carries the chat's type from the message it answers, for the
// hooks that see its conversation: never read back out of the session
// key, which need not name it (a group sharing the main session's key).
func TestReplyCarriesTheChatType(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	for _, ct := range []channel.ChatType{channel.ChatGroup, channel.ChatDirect} {
		f.n++
		m := message.Message{Instance: "tg", Channel: "telegram", ChatType: ct, ChatID: "5", MessageID: fmt.Sprintf("ct%d", f.n),
			Sender: channel.Sender{ID: "5", Name: "Ann"}, Body: "hi", Timestamp: f.now, From: "tg:5"}
		f.turns.Run(context.Background(), f.requestOf(m))
		r := f.out.replies
		if len(r) == 0 || r[len(r)-1].ChatType != ct {
			t.Fatalf("replies %+v: want the last of chat type %q", r, ct)
		}
	}
}
