package received

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

// fakeHooks answers per instance with a function and records the calls in
// order; an instance without a function is not a message_received hook.
type fakeHooks struct {
	mu      sync.Mutex
	answer  map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error)
	calls   []string
	texts   []string
	timeout time.Duration
}

// rk is the session of the messages the tests decide on.
var rk = sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "k"}

func (f *fakeHooks) MessageReceived(_ context.Context, instance string, req hook.ReceivedRequest, timeout time.Duration) (hook.ReceivedResponse, bool, error) {
	fn := f.answer[instance]
	if fn == nil {
		return hook.ReceivedResponse{}, false, nil
	}
	f.mu.Lock()
	f.calls = append(f.calls, instance)
	f.texts = append(f.texts, req.Text)
	f.timeout = timeout
	f.mu.Unlock()
	r, err := fn(req)
	return r, true, err
}

func (f *fakeHooks) IsReceivedHook(instance string) bool { return f.answer[instance] != nil }

// fakeJournal records the amended messages.
type fakeJournal struct {
	amended map[int64][]byte
	err     error
}

func (j *fakeJournal) Amend(_ context.Context, id int64, msg []byte) error {
	if j.err != nil {
		return j.err
	}
	j.amended[id] = msg
	return nil
}

// fakeMedia "downloads" every attachment to /media/<ref>.
type fakeMedia struct{ fetched int }

func (m *fakeMedia) FetchMedia(_ context.Context, _ sessionkey.Key, msg *message.Message, _ int64) {
	m.fetched++
	for i := range msg.Media {
		msg.Media[i].Path = "/media/" + msg.Media[i].Ref
	}
}

func newStage(h *fakeHooks) (*Stage, *fakeJournal, *fakeMedia) {
	j, md := &fakeJournal{amended: map[int64][]byte{}}, &fakeMedia{}
	return New(h, md, j, hclog.NewNullLogger()), j, md
}

func msg(body string) *message.Message {
	return &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "c1", Sender: channel.Sender{ID: "u1"}, Body: body}
}

// recorded decodes what the stage journaled for entry id.
func recorded(t *testing.T, j *fakeJournal, id int64) message.Message {
	t.Helper()
	raw, ok := j.amended[id]
	if !ok {
		t.Fatalf("nothing recorded for entry %d", id)
	}
	m, err := message.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pass(hook.ReceivedRequest) (hook.ReceivedResponse, error) { return hook.ReceivedResponse{}, nil }

// TestDecideInOrder: the hooks run in config order, each seeing what the
// previous one left; a rewrite and a note land in the message, and the
// message is journaled with the decision before Decide returns.
func TestDecideInOrder(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){
		"upper": func(r hook.ReceivedRequest) (hook.ReceivedResponse, error) {
			return hook.ReceivedResponse{Rewrite: true, Text: strings.ToUpper(r.Text)}, nil
		},
		"note": func(r hook.ReceivedRequest) (hook.ReceivedResponse, error) {
			return hook.ReceivedResponse{Notes: []hook.Note{{Label: "Seen", Text: "saw " + r.Text}}, Step: " 👀 noted in 0.1 s "}, nil
		},
	}}
	s, j, _ := newStage(h)
	m := msg("hello")
	v := s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "upper"}, {Instance: "tg"}, {Instance: "note"}}, Timeout: 3 * time.Second}, 7, rk, m)
	if v.Drop || v.Stopped {
		t.Fatalf("verdict %+v", v)
	}
	if strings.Join(h.calls, ",") != "upper,note" || h.texts[1] != "HELLO" || h.timeout != 3*time.Second {
		t.Fatalf("calls %v with texts %v (timeout %s)", h.calls, h.texts, h.timeout)
	}
	want := "HELLO\n\n[Seen]\nsaw HELLO"
	if m.Body != want {
		t.Fatalf("body %q, want %q", m.Body, want)
	}
	got := recorded(t, j, 7)
	if got.Body != want || got.Received == nil || strings.Join(got.Received.Hooks, ",") != "upper,note" {
		t.Fatalf("journaled %+v (received %+v)", got.Body, got.Received)
	}
	// The hooks' own step lines are journaled with the decision (the card shows them).
	if strings.Join(got.Received.Steps, "|") != "👀 noted in 0.1 s" {
		t.Fatalf("journaled steps %q", got.Received.Steps)
	}
}

// TestDecideRecordedIsNotAskedAgain: a message whose decision is in the
// journal (a restart) is not shown to any hook again; a recorded drop
// stays a drop with its reason.
func TestDecideRecordedIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){"a": pass}}
	s, j, _ := newStage(h)
	set := Settings{Hooks: []Hook{{Instance: "a"}}, Timeout: time.Second}
	first := msg("hi")
	s.Decide(context.Background(), set, 1, rk, first)
	again := recorded(t, j, 1)
	s.Decide(context.Background(), set, 1, rk, &again)
	if len(h.calls) != 1 {
		t.Fatalf("asked %d times, want 1", len(h.calls))
	}
	dropped := msg("x")
	dropped.Received = &message.Received{Dropped: true, Reason: "no"}
	if v := s.Decide(context.Background(), set, 2, rk, dropped); !v.Drop || v.Reason != "no" || len(h.calls) != 1 {
		t.Fatalf("recorded drop: %+v after %d calls", v, len(h.calls))
	}
}

// TestDecideDrop: a drop ends the chain (later hooks are not asked), the
// sender's reason is kept, and an empty reason gets the default sentence.
func TestDecideDrop(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ reason, want string }{{"No spam, please.", "No spam, please."}, {"  ", DefaultDropReason}} {
		h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){
			"gate": func(hook.ReceivedRequest) (hook.ReceivedResponse, error) {
				return hook.ReceivedResponse{Drop: true, DropReason: c.reason}, nil
			},
			"after": pass,
		}}
		s, j, _ := newStage(h)
		v := s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "gate"}, {Instance: "after"}}, Timeout: time.Second}, 3, rk, msg("buy now"))
		if !v.Drop || v.Reason != c.want || len(h.calls) != 1 {
			t.Fatalf("verdict %+v after calls %v", v, h.calls)
		}
		if r := recorded(t, j, 3).Received; r == nil || !r.Dropped || r.Reason != c.want {
			t.Fatalf("journaled %+v", r)
		}
	}
}

// TestDecideOnError: a failing hook is skipped by default and drops the
// message with on_error = "drop"; a host that stops meanwhile records
// nothing.
func TestDecideOnError(t *testing.T) {
	t.Parallel()
	fail := func(hook.ReceivedRequest) (hook.ReceivedResponse, error) {
		return hook.ReceivedResponse{}, context.DeadlineExceeded
	}
	rewrite := func(hook.ReceivedRequest) (hook.ReceivedResponse, error) {
		return hook.ReceivedResponse{Rewrite: true, Text: "after"}, nil
	}
	h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){"bad": fail, "good": rewrite}}
	s, j, _ := newStage(h)
	m := msg("before")
	if v := s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "bad"}, {Instance: "good"}}}, 1, rk, m); v.Drop || m.Body != "after" {
		t.Fatalf("skip: %+v, body %q", v, m.Body)
	}
	if r := recorded(t, j, 1).Received; strings.Join(r.Hooks, ",") != "good" {
		t.Fatalf("answered hooks %v, want only good", r.Hooks)
	}
	m = msg("before")
	if v := s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "bad", Drop: true}, {Instance: "good"}}}, 2, rk, m); !v.Drop || v.Reason != FailedDropReason {
		t.Fatalf("drop: %+v", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := s.Decide(ctx, Settings{Hooks: []Hook{{Instance: "bad", Drop: true}}}, 3, rk, msg("x")); !v.Stopped {
		t.Fatalf("stopping host: %+v", v)
	}
	if _, ok := j.amended[3]; ok {
		t.Fatal("a decision was recorded while the host stopped")
	}
}

// TestDecideAttachments: the attachments are saved before the first hook
// and it sees their absolute paths; a note that replaces an attachment
// (a transcript for the audio) removes it from the message.
func TestDecideAttachments(t *testing.T) {
	t.Parallel()
	var seen []hook.Attachment
	h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){
		"stt": func(r hook.ReceivedRequest) (hook.ReceivedResponse, error) {
			seen = r.Attachments
			return hook.ReceivedResponse{Notes: []hook.Note{{Attachment: r.Attachments[0].Path, Label: "Voice note transcript", Text: "book a table", Replace: true}}}, nil
		},
	}}
	s, _, md := newStage(h)
	m := msg("")
	m.Media = []message.Media{{Kind: channel.MediaVoice, Ref: "v1"}, {Kind: channel.MediaImage, Ref: "i1"}}
	s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "stt"}}}, 1, rk, m)
	if md.fetched != 1 || len(seen) != 2 || !filepath.IsAbs(seen[0].Path) {
		t.Fatalf("fetched %d times; the hook saw %+v", md.fetched, seen)
	}
	if m.Body != "[Voice note transcript]\nbook a table" || len(m.Media) != 1 || m.Media[0].Ref != "i1" {
		t.Fatalf("body %q, media %+v", m.Body, m.Media)
	}
}

// TestDecidePassesOver: without message_received hooks, for a command and
// for a button press nothing is asked, fetched or recorded.
func TestDecidePassesOver(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){"a": pass}}
	s, j, md := newStage(h)
	withMedia := msg("x")
	withMedia.Media = []message.Media{{Kind: channel.MediaImage, Ref: "i"}}
	s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "tg"}}}, 1, rk, withMedia)
	s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "a"}}}, 2, rk, msg("/status"))
	press := msg("Yes")
	press.Action = &channel.Action{ButtonID: "yes"}
	s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "a"}}}, 3, rk, press)
	if len(h.calls) != 0 || len(j.amended) != 0 || md.fetched != 0 {
		t.Fatalf("calls %v, recorded %d, fetched %d", h.calls, len(j.amended), md.fetched)
	}
}

// TestDecideRecordFails: a journal that refuses the record does not stop
// the message; the decision stands for this run.
func TestDecideRecordFails(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{answer: map[string]func(hook.ReceivedRequest) (hook.ReceivedResponse, error){
		"a": func(hook.ReceivedRequest) (hook.ReceivedResponse, error) {
			return hook.ReceivedResponse{Rewrite: true, Text: "new"}, nil
		},
	}}
	s, j, _ := newStage(h)
	j.err = errors.New("disk full")
	m := msg("old")
	if v := s.Decide(context.Background(), Settings{Hooks: []Hook{{Instance: "a"}}}, 1, rk, m); v.Drop || m.Body != "new" {
		t.Fatalf("%+v, body %q", v, m.Body)
	}
}
