package attach

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// inner is a recording fake of the runner: each Run answers "inner: " and
// the session it resumed.
type inner struct {
	mu   sync.Mutex
	runs []runner.TurnRequest
	abs  []string
}

func (f *inner) Run(_ context.Context, req runner.TurnRequest) (*runner.Turn, error) {
	f.mu.Lock()
	f.runs = append(f.runs, req)
	f.mu.Unlock()
	return runner.FinishedTurn(runner.Result{Text: "inner: " + req.SessionID, SessionID: req.SessionID}), nil
}
func (f *inner) Steer(string, string) (bool, error) { return true, nil }
func (f *inner) CanSteer() bool                     { return true }
func (f *inner) Stop(string)                        {}
func (f *inner) Abort(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abs = append(f.abs, key)
	return false
}

// term is a recording fake Terminal.
type term struct {
	frames chan Frame
	closed chan string
	fail   bool
}

func newTerm() *term { return &term{frames: make(chan Frame, 16), closed: make(chan string, 1)} }

func (t *term) Send(f Frame) error {
	if t.fail {
		return errors.New("gone")
	}
	t.frames <- f
	return nil
}
func (t *term) Close(reason string) { t.closed <- reason }

func (t *term) next(tb testing.TB, typ string) Frame {
	tb.Helper()
	select {
	case f := <-t.frames:
		if f.Type != typ {
			tb.Fatalf("frame %+v, want %s", f, typ)
		}
		return f
	case <-time.After(5 * time.Second):
		tb.Fatalf("no %s frame", typ)
	}
	return Frame{}
}

// result drains a turn and returns its events' kinds and its result.
func result(tb testing.TB, t *runner.Turn) ([]runner.EventKind, runner.Result) {
	tb.Helper()
	var kinds []runner.EventKind
	var res runner.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range t.Events() {
			if e.Kind == runner.EventResult {
				res = *e.Result
				continue
			}
			kinds = append(kinds, e.Kind)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		tb.Fatal("the turn did not end")
	}
	return kinds, res
}

type audits struct {
	mu    sync.Mutex
	kinds []string
}

func (a *audits) add(kind string, _ Link, _ string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kinds = append(a.kinds, kind)
}

const key = "agent:main:tg:direct:9"

// TestAttachedTurn: an attached chat's turn goes to the terminal, the
// terminal's reply ends it (a second reply is refused), nothing runs in
// the runner; a chat nobody attached to runs in the runner.
func TestAttachedTurn(t *testing.T) {
	in, au := &inner{}, &audits{}
	h := New(Options{Inner: in, Audit: au.add})
	tm := newTerm()
	if err := h.Attach(Link{Key: key, Chat: "tg:9", SessionID: "s"}, tm); err != nil {
		t.Fatal(err)
	}
	if err := h.Attach(Link{Key: key, Chat: "tg:9"}, newTerm()); !errors.Is(err, ErrAttached) {
		t.Fatalf("a second terminal: %v", err)
	}
	turn, err := h.Run(context.Background(), runner.TurnRequest{Key: key, SessionID: "own", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	f := tm.next(t, FrameMessage)
	if f.Content != "hi" || f.Meta["chat_id"] != "tg:9" {
		t.Fatalf("message frame %+v", f)
	}
	if err := h.Reply(key, tm, "hello", []string{"/tmp/a.png"}); err != nil {
		t.Fatal(err)
	}
	_, res := result(t, turn)
	if res.Err != nil || res.Text != "hello\nMEDIA:/tmp/a.png" || res.SessionID != "own" {
		t.Fatalf("result %+v", res)
	}
	if err := h.Reply(key, tm, "again", nil); err == nil {
		t.Fatal("a reply with no turn waiting was taken")
	}
	if err := h.Reply(key, newTerm(), "x", nil); err == nil {
		t.Fatal("a reply from another terminal was taken")
	}
	if _, res := result(t, must(h.Run(context.Background(), runner.TurnRequest{Key: "other", SessionID: "o"}))); res.Text != "inner: o" {
		t.Fatalf("a chat nobody attached to: %+v", res)
	}
	if len(in.runs) != 1 || len(h.Attached()) != 1 || h.Attached()[0].Turns != 1 {
		t.Fatalf("runner runs %d, attached %+v", len(in.runs), h.Attached())
	}
	if ok, _ := h.Steer(key, "x"); ok {
		t.Fatal("an attached chat's message was steered")
	}
	if len(au.kinds) != 1 || au.kinds[0] != "attach" {
		t.Fatalf("audit %v", au.kinds)
	}
}

func must(t *runner.Turn, err error) *runner.Turn {
	if err != nil {
		panic(err)
	}
	return t
}

// TestAttachedPermission: the terminal's permission prompt is the turn's
// question; the answer goes back as a permission frame. Outside a turn it
// is left to the terminal.
func TestAttachedPermission(t *testing.T) {
	h := New(Options{Inner: &inner{}})
	tm := newTerm()
	_ = h.Attach(Link{Key: key, Chat: "tg:9"}, tm)
	h.Permission(key, tm, Frame{RequestID: "early", ToolName: "Bash"}) // no turn: ignored
	turn := must(h.Run(context.Background(), runner.TurnRequest{Key: key}))
	tm.next(t, FrameMessage)
	h.Permission(key, tm, Frame{RequestID: "abcde", ToolName: "Bash", Description: "list", InputPreview: `{"command":"ls"}`})
	var e runner.Event
	select {
	case e = <-turn.Events():
	case <-time.After(5 * time.Second):
		t.Fatal("no permission event")
	}
	if e.Kind != runner.EventPermission || e.Permission.Tool != "Bash" || string(e.Permission.Input) != `{"command":"ls"}` || e.Permission.Description != "list" {
		t.Fatalf("event %+v", e)
	}
	e.Permission.Answer(runner.Decision{Allow: true})
	if f := tm.next(t, FramePermission); f.RequestID != "abcde" || f.Behavior != "allow" {
		t.Fatalf("answer %+v", f)
	}
	var in map[string]string
	_ = json.Unmarshal(previewInput(Frame{Description: "d", InputPreview: "not json"}), &in)
	if in["input_preview"] != "not json" || in["description"] != "d" {
		t.Fatalf("a preview that is not JSON: %v", in)
	}
	_ = h.Reply(key, tm, "done", nil)
	result(t, turn)
}

// TestAttachedStop: Stop ends the terminal's turn at once and tells it.
func TestAttachedStop(t *testing.T) {
	in := &inner{}
	h := New(Options{Inner: in})
	tm := newTerm()
	_ = h.Attach(Link{Key: key, Chat: "tg:9"}, tm)
	turn := must(h.Run(context.Background(), runner.TurnRequest{Key: key}))
	f := tm.next(t, FrameMessage)
	if !h.Abort(key) {
		t.Fatal("Abort found no turn")
	}
	if _, res := result(t, turn); res.Err == nil || res.Err.Kind != runner.KindAborted {
		t.Fatalf("result %+v", res)
	}
	if g := tm.next(t, FrameStopped); g.ID != f.ID {
		t.Fatalf("stopped %+v", g)
	}
	if h.Abort(key) || len(in.abs) != 1 {
		t.Fatalf("a second Abort: runner aborts %v", in.abs)
	}
	// A stopped context ends it too.
	ctx, cancel := context.WithCancel(context.Background())
	turn = must(h.Run(ctx, runner.TurnRequest{Key: key}))
	tm.next(t, FrameMessage)
	cancel()
	if _, res := result(t, turn); res.Err == nil || res.Err.Kind != runner.KindAborted {
		t.Fatalf("result %+v", res)
	}
}

// TestTerminalGone: when the terminal goes away, its unanswered turn and
// the chat's next turns run in the runner, resuming the terminal's session
// (Fallback); /detach forgets it and the chat is in its own session again.
func TestTerminalGone(t *testing.T) {
	in, au := &inner{}, &audits{}
	var fell []Link
	h := New(Options{Inner: in, Audit: au.add, Fallback: func(l Link, req runner.TurnRequest) (string, error) {
		fell = append(fell, l)
		return l.SessionID, nil
	}})
	tm := newTerm()
	_ = h.Attach(Link{Key: key, Chat: "tg:9", SessionID: "term", Transcript: "/x/term.jsonl"}, tm)
	turn := must(h.Run(context.Background(), runner.TurnRequest{Key: key, SessionID: "own", NewSession: true}))
	tm.next(t, FrameMessage)
	h.Gone(key, newTerm()) // another terminal's close: nothing
	if len(h.Attached()) != 1 {
		t.Fatal("another terminal's close detached the chat")
	}
	h.Gone(key, tm)
	if _, res := result(t, turn); res.Text != "inner: term" {
		t.Fatalf("the unanswered turn: %+v", res)
	}
	if len(fell) != 1 || in.runs[0].NewSession {
		t.Fatalf("fallback %v, run %+v", fell, in.runs)
	}
	if _, res := result(t, must(h.Run(context.Background(), runner.TurnRequest{Key: key, SessionID: "own"}))); res.Text != "inner: term" {
		t.Fatalf("the next turn: %+v", res)
	}
	if err := h.Reply(key, tm, "late", nil); err == nil {
		t.Fatal("a gone terminal's reply was taken")
	}
	owner := &access.Policy{Owners: []string{"tg:9"}}
	m := &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "9", Sender: channel.Sender{ID: "9"}, From: "tg:9"}
	if got := h.Detach(*owner, key, m); got != "Back to this chat's own session (the terminal's session it took over after the terminal exited is left as it is)." {
		t.Fatalf("/detach: %q", got)
	}
	if _, res := result(t, must(h.Run(context.Background(), runner.TurnRequest{Key: key, SessionID: "own"}))); res.Text != "inner: own" {
		t.Fatalf("after /detach: %+v", res)
	}
	if len(fell) != 1 {
		t.Fatalf("fallback ran %d times", len(fell))
	}
	if want := []string{"attach", "detach"}; len(au.kinds) != 2 || au.kinds[0] != want[0] || au.kinds[1] != want[1] {
		t.Fatalf("audit %v", au.kinds)
	}
}

// TestDetachCommand: /detach lets an attached terminal go (it is told);
// a non-owner and a group are refused.
func TestDetachCommand(t *testing.T) {
	in, au := &inner{}, &audits{}
	h := New(Options{Inner: in, Audit: au.add})
	tm := newTerm()
	_ = h.Attach(Link{Key: key, Chat: "tg:9", SessionID: "term"}, tm)
	p := access.Policy{Owners: []string{"tg:9"}}
	bob := &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "5", Sender: channel.Sender{ID: "5"}, From: "tg:5"}
	if got := h.Detach(p, key, bob); got != "Only an owner may use /detach." {
		t.Fatalf("non-owner: %q", got)
	}
	group := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", Sender: channel.Sender{ID: "9"}, From: "tg:9"}
	if got := h.Detach(p, key, group); got == "" || len(h.Attached()) != 1 {
		t.Fatalf("group: %q", got)
	}
	owner := &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "9", Sender: channel.Sender{ID: "9"}, From: "tg:9"}
	if got := h.Detach(p, key, owner); got != "Detached: the terminal session no longer answers here. Your next message goes to this chat's own session." {
		t.Fatalf("owner: %q", got)
	}
	select {
	case <-tm.closed:
	default:
		t.Fatal("the terminal was not told")
	}
	if _, res := result(t, must(h.Run(context.Background(), runner.TurnRequest{Key: key, SessionID: "own"}))); res.Text != "inner: own" {
		t.Fatalf("after /detach: %+v", res)
	}
	if got := h.Detach(p, key, owner); got != "No terminal is attached to this chat." {
		t.Fatalf("again: %q", got)
	}
}

// TestReattachAfterRestart: a host that stopped while a terminal was
// attached holds the chat's turn until the terminal is back; one that
// does not come back within the grace falls back to its session.
func TestReattachAfterRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), StateFileName)
	clock := tstimetest.NewFake(time.Unix(1000, 0))
	first := New(Options{Inner: &inner{}, StateFile: state, Clock: clock})
	_ = first.Attach(Link{Key: key, Chat: "tg:9", SessionID: "term"}, newTerm())
	_ = first.Attach(Link{Key: "k2", Chat: "tg:8", SessionID: "t2"}, newTerm())
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}
	// "kill -9": a new hub reads the file.
	in := &inner{}
	h := New(Options{Inner: in, StateFile: state, Clock: clock, Grace: 15 * time.Second,
		Fallback: func(l Link, _ runner.TurnRequest) (string, error) { return l.SessionID, nil }})
	got := make(chan *runner.Turn, 1)
	go func() {
		got <- must(h.Run(context.Background(), runner.TurnRequest{Key: key, SessionID: "own", Prompt: "held"}))
	}()
	tm := newTerm()
	waitFor(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.awaited[key] != nil })
	_ = h.Attach(Link{Key: key, Chat: "tg:9", SessionID: "term"}, tm)
	if f := tm.next(t, FrameMessage); f.Content != "held" {
		t.Fatalf("the held message: %+v", f)
	}
	_ = h.Reply(key, tm, "back", nil)
	if _, res := result(t, <-got); res.Text != "back" || len(in.runs) != 0 {
		t.Fatalf("result %+v, runner runs %d", res, len(in.runs))
	}
	// k2's terminal does not come back: after the grace its chat resumes t2.
	go func() { got <- must(h.Run(context.Background(), runner.TurnRequest{Key: "k2", SessionID: "own2"})) }()
	clock.Advance(15 * time.Second)
	if _, res := result(t, <-got); res.Text != "inner: t2" {
		t.Fatalf("after the grace: %+v", res)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}

// sessions is a fake store of sessions.
type sessions []store.Session

func (s sessions) RecentSessions(context.Context, int) ([]store.Session, error) { return s, nil }

func row(key, instance, chatType, chat string) store.Session {
	b, _ := json.Marshal(map[string]string{"instance": instance, "chat_type": chatType, "chat_id": chat})
	return store.Session{Key: key, Chat: b}
}

// TestResolve: only an owner's own direct chat with a session of its own
// resolves; a non-owner's chat, a group (with or without non-owners), a
// shared main session and an unknown chat are refused.
func TestResolve(t *testing.T) {
	p := &access.Policy{Owners: []string{"tg:9", "wa:9"}, AllowFrom: []string{"tg:5"}}
	db := sessions{
		row("agent:main:tg:direct:9", "tg", "direct", "9"),
		row("agent:main:tg:direct:5", "tg", "direct", "5"),
		row("agent:main:tg:group:-7", "tg", "group", "-7"),
		row("agent:main:main", "wa", "direct", "9"),
	}
	for _, tc := range []struct {
		chat string
		key  string
		err  error
	}{
		{"tg:9", "agent:main:tg:direct:9", nil},
		{"tg:5", "", access.ErrNotOwner},
		{"tg:-7", "", access.ErrMembersUnknown},
		{"wa:9", "", ErrChatShared},
		{"tg:4", "", ErrChatUnknown},
		{"tg", "", ErrChatForm},
	} {
		got, err := Resolve(context.Background(), db, p, tc.chat)
		if got != tc.key || !errors.Is(err, tc.err) {
			t.Errorf("%s: %q %v, want %q %v", tc.chat, got, err, tc.key, tc.err)
		}
	}
}

// TestImportTranscript: the terminal's transcript lands where the chat's
// claude resumes it, 0600; a file that is not the session's is refused.
func TestImportTranscript(t *testing.T) {
	dir := t.TempDir()
	id := "0b6f2a59-3c39-4a59-9f3e-0c2f9a3c1d11"
	src := filepath.Join(dir, "term", id+".jsonl")
	_ = os.MkdirAll(filepath.Dir(src), 0o700)
	if err := os.WriteFile(src, []byte(`{"x":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, err := ImportTranscript(src, filepath.Join(dir, "cfg"), "/srv/my.proj", id)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "cfg", "projects", "-srv-my-proj", id+".jsonl"); dst != want {
		t.Fatalf("dst %s, want %s", dst, want)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	if _, err := ImportTranscript(filepath.Join(dir, "term", "other.jsonl"), dir, "/w", id); err == nil {
		t.Fatal("another file was taken as the session's transcript")
	}
	if _, err := ImportTranscript(src, dir, "/w", "../../etc"); err == nil {
		t.Fatal("a session id that is no uuid was taken")
	}
}
