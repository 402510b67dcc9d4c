package turn

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

// recordingHooks records every before_agent_start request.
type recordingHooks struct {
	mu   sync.Mutex
	reqs []hook.Request
}

func (h *recordingHooks) BeforeAgentStart(_ context.Context, _ string, req hook.Request, _ time.Duration) (hook.Response, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs = append(h.reqs, req)
	return hook.Response{}, true, nil
}

// mediaChannels serves every ref as its own bytes ("data:<text>" →
// "<text>"), with the MIME type the platform reports.
type mediaChannels struct{}

func (mediaChannels) Known(string) bool { return true }
func (mediaChannels) Download(_ context.Context, _ string, _ int64, ref string, _ int64, w io.Writer) (channel.MediaInfo, error) {
	n, err := io.WriteString(w, strings.TrimPrefix(ref, "data:"))
	return channel.MediaInfo{MIME: "image/png", Size: int64(n)}, err
}

type labels map[string]string

func (l labels) DisplayName(instance string) string { return l[instance] }
func (l labels) Capabilities(string) (channel.Capabilities, bool) {
	return channel.Capabilities{}, false
}

// capsFixture runs turns with a recording hook, downloadable media and
// display names.
func capsFixture(t *testing.T, names labels) (*fixture, *recordingHooks, string) {
	t.Helper()
	f := newFixture(t, Settings{Streaming: StreamOff})
	hooks := &recordingHooks{}
	ws := t.TempDir()
	var lab Labels
	if names != nil {
		lab = names
	}
	f.turns = New(Options{Agent: f.agent, Channels: mediaChannels{}, Hooks: hooks, Labels: lab, Output: f.out, Store: f.db,
		Settings:    Settings{Streaming: StreamOff, HookOrder: []string{"rec"}, Workspace: ws},
		MemoryFlush: MemoryFlush{Disabled: true}, Now: func() time.Time { return f.now }})
	return f, hooks, ws
}

// queue accepts m and returns the turn's request over it.
func (f *fixture) queue(m message.Message) Request {
	f.t.Helper()
	ctx := context.Background()
	f.n++
	m.MessageID = "m" + string(rune('0'+f.n))
	res, err := f.db.Accept(ctx, store.Inbound{Instance: m.Instance, ChatID: m.ChatID, MessageID: m.MessageID, Message: message.Encode(&m)})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.Enqueue(ctx, res.ID, "agent:main:k"); err != nil {
		f.t.Fatal(err)
	}
	e, _ := f.db.Entry(ctx, res.ID)
	return Request{Key: sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "k"}, Entries: []store.Entry{e}, Start: func(ctx context.Context) error { return f.db.Start(ctx, res.ID) }, AbortReason: func() string { return "" }}
}

func TestHookRequestCarriesWorkspaceSessionAndAttachments(t *testing.T) {
	t.Parallel()
	f, hooks, ws := capsFixture(t, nil)
	m := message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatDirect, ChatID: "5", Sender: channel.Sender{ID: "5", Name: "Ann"},
		Body: "look", Timestamp: f.now, Media: []message.Media{
			{Kind: channel.MediaImage, Ref: "data:PNGBYTES", Filename: "cat.png"},
			{Kind: channel.MediaDocument, Ref: "data:%PDF", MIME: "application/pdf", Filename: "a.pdf"},
		}}
	f.turns.Run(context.Background(), f.queue(m))
	if len(hooks.reqs) != 1 || len(f.agent.reqs) != 1 {
		t.Fatalf("hook calls %d, runs %d", len(hooks.reqs), len(f.agent.reqs))
	}
	req := hooks.reqs[0]
	if req.Workspace != ws || !filepath.IsAbs(req.Workspace) {
		t.Errorf("workspace %q, want %q", req.Workspace, ws)
	}
	if req.SessionID == "" || req.SessionID != f.agent.reqs[0].SessionID || !req.NewSession {
		t.Errorf("session id %q (new %v), the turn runs in %q", req.SessionID, req.NewSession, f.agent.reqs[0].SessionID)
	}
	if len(req.Attachments) != 2 {
		t.Fatalf("attachments %+v", req.Attachments)
	}
	for i, want := range []struct {
		kind     channel.MediaKind
		mime, fn string
		size     int64
		contents string
	}{{channel.MediaImage, "image/png", "cat.png", 8, "PNGBYTES"}, {channel.MediaDocument, "application/pdf", "a.pdf", 4, "%PDF"}} {
		a := req.Attachments[i]
		if a.Kind != want.kind || a.MIME != want.mime || a.Filename != want.fn || a.Size != want.size || !filepath.IsAbs(a.Path) || !strings.HasPrefix(a.Path, ws+string(filepath.Separator)) {
			t.Errorf("attachment %d: %+v", i, a)
			continue
		}
		if b, err := os.ReadFile(a.Path); err != nil || string(b) != want.contents {
			t.Errorf("attachment %d at %s: %q %v", i, a.Path, b, err)
		}
	}
	// The next turn resumes the session: same id, not new, no attachments.
	f.now = f.now.Add(time.Minute)
	m.Media = nil
	f.turns.Run(context.Background(), f.queue(m))
	if r := hooks.reqs[1]; r.SessionID != req.SessionID || r.NewSession || len(r.Attachments) != 0 {
		t.Errorf("second turn's hook request: %+v", r)
	}
}

func TestEnvelopeUsesTheDisplayName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		labels labels
		want   string
	}{
		{"declared", labels{"dc": "Discord (work)"}, "[Discord (work) Ann"},
		{"none declared: the source", labels{}, "[Telegram Ann"},
		{"no port: the source", nil, "[Telegram Ann"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := capsFixture(t, tc.labels)
			m := message.Message{Instance: "dc", Channel: "telegram", ChatType: channel.ChatDirect, ChatID: "5", Sender: channel.Sender{ID: "5", Name: "Ann"}, Body: "hi", Timestamp: f.now}
			f.turns.Run(context.Background(), f.queue(m))
			if p := f.agent.reqs[0].Prompt; !strings.HasPrefix(p, tc.want) {
				t.Errorf("prompt %q, want it to start with %q", p, tc.want)
			}
		})
	}
}

// TestStreamedBlocksKeepFencesBalanced: on a channel that cannot edit,
// each streamed block is a message of its own with balanced code fences,
// a long code block closed and reopened with its info string.
func TestStreamedBlocksKeepFencesBalanced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamBlocks})
	var code strings.Builder
	for i := range 80 {
		code.WriteString("\tfmt.Println(\"line of generated code\", " + strings.Repeat("x", i%7) + ")\n")
	}
	text := "Here it is:\n\n```go\n" + code.String() + "```\n\nThat is all."
	for r := []rune(text); len(r) > 0; {
		n := min(len(r), 50)
		f.agent.events = append(f.agent.events, runner.Event{Kind: runner.EventTextDelta, Text: string(r[:n])})
		r = r[n:]
	}
	f.agent.result = runner.Result{Text: text}
	o := f.turns.Run(context.Background(), f.request("tg", "code please"))
	msgs := append(append([]string(nil), f.out.sent...), o.Text)
	if len(f.out.sent) < 2 {
		t.Fatalf("the reply streams in blocks: %q", msgs)
	}
	for i, m := range msgs {
		if strings.Count(m, "```")%2 != 0 {
			t.Errorf("message %d has an open fence: %q", i, m)
		}
		if i > 0 && strings.HasPrefix(m, "\tfmt") {
			t.Errorf("message %d continues code without reopening the fence: %q", i, m)
		}
	}
}

// recordingDraft records the texts a live draft is asked to show, and
// hands each to shown when it is not nil.
type recordingDraft struct {
	nopDraft
	mu      sync.Mutex
	updates []string
	shown   chan string
}

func (d *recordingDraft) Update(text string) {
	d.mu.Lock()
	d.updates = append(d.updates, text)
	d.mu.Unlock()
	if d.shown != nil {
		d.shown <- text
	}
}

// TestDraftShowsTheFirstDeltaSoon: a live draft shows the streamed text
// draftFirstWait after the first delta, not once the coalescer's block
// is due (800 characters or a pause of a second), and each later delta
// at once (the draft itself throttles its edits).
func TestDraftShowsTheFirstDeltaSoon(t *testing.T) {
	t.Parallel()
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	f := newFixtureWith(t, Settings{Streaming: StreamDraft}, func(o *Options) { o.Clock, o.Now = clk, clk.Now })
	dr := &recordingDraft{shown: make(chan string, 8)}
	f.out.edits, f.out.draft = true, dr
	run, emit, finish := runner.StreamedTurn()
	f.agent.turn = run
	go func() {
		defer finish(runner.Result{Text: "Hello there"})
		emit(runner.Event{Kind: runner.EventTextDelta, Text: "Hello"})
		deadline := time.After(10 * time.Second)
		for {
			// The turn reads the delta and arms its timer on the next
			// step; the clock moves until the draft shows it.
			clk.Advance(draftFirstWait / 2)
			select {
			case got := <-dr.shown:
				if got != "Hello" {
					t.Errorf("the draft first showed %q, want \"Hello\"", got)
				}
				emit(runner.Event{Kind: runner.EventTextDelta, Text: " there"})
				if got := <-dr.shown; got != "Hello there" {
					t.Errorf("the next delta showed %q, want \"Hello there\"", got)
				}
				return
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				t.Error("the draft never showed the first delta")
				return
			}
		}
	}()
	f.turns.Run(context.Background(), f.request("tg", "hi"))
}

// TestDraftNotShownForAQuickReply: a reply whose result comes within
// draftFirstWait of its first delta is one message: the draft shows
// nothing before the result.
func TestDraftNotShownForAQuickReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamDraft})
	dr := &recordingDraft{}
	f.out.edits, f.out.draft = true, dr
	f.agent.events = []runner.Event{{Kind: runner.EventTextDelta, Text: "Hello"}, {Kind: runner.EventTextDelta, Text: " there"}}
	f.agent.result = runner.Result{Text: "Hello there"}
	f.turns.Run(context.Background(), f.request("tg", "hi"))
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if len(dr.updates) > 1 || len(dr.updates) == 1 && dr.updates[0] != "Hello there" {
		t.Fatalf("draft updates %q, want none but the whole reply at its end", dr.updates)
	}
}
