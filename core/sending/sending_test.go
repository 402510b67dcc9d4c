package sending

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/hook"
)

// fakeHooks answers per instance; an instance without an answer is not a
// message_sending hook. It records the text each call saw.
type fakeHooks struct {
	answer map[string]func(hook.SendingRequest) (hook.SendingResponse, error)
	saw    []string
}

func (f *fakeHooks) MessageSending(_ context.Context, instance string, req hook.SendingRequest, _ time.Duration) (hook.SendingResponse, bool, error) {
	fn := f.answer[instance]
	if fn == nil {
		return hook.SendingResponse{}, false, nil
	}
	f.saw = append(f.saw, instance+": "+req.Text)
	r, err := fn(req)
	return r, true, err
}

func (f *fakeHooks) IsSendingHook(instance string) bool { return f.answer[instance] != nil }

// fakeFiles "saves" to /media/<key>/<name>, or fails for a name "bad".
type fakeFiles struct{ saved map[string][]byte }

func (f *fakeFiles) SaveMedia(key sessionkey.Key, name string, data []byte) (string, error) {
	if name == "bad" {
		return "", errors.New("disk full")
	}
	p := "/media/" + key.Chat + "/" + name
	f.saved[p] = data
	return p, nil
}

// TestShape: hooks run in order on what the previous left; a failing one
// is skipped; media become MEDIA: lines of saved files (one that cannot
// be saved is left out); a suppress ends the chain with nothing to send.
func TestShape(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{answer: map[string]func(hook.SendingRequest) (hook.SendingResponse, error){
		"footer": func(r hook.SendingRequest) (hook.SendingResponse, error) {
			return hook.SendingResponse{Rewrite: true, Text: r.Text + "\n— sent by clawhost"}, nil
		},
		"broken": func(hook.SendingRequest) (hook.SendingResponse, error) {
			return hook.SendingResponse{}, errors.New("boom")
		},
		"voice": func(r hook.SendingRequest) (hook.SendingResponse, error) {
			return hook.SendingResponse{Media: []hook.MediaFile{{Filename: "reply.ogg", Data: []byte("ogg")}, {Filename: "bad", Data: []byte("x")}}}, nil
		},
		"mute": func(hook.SendingRequest) (hook.SendingResponse, error) {
			return hook.SendingResponse{Suppress: true}, nil
		},
	}}
	files := &fakeFiles{saved: map[string][]byte{}}
	s := New(h, files, nil, hclog.NewNullLogger())
	r := Reply{ID: 9, Text: "Hello."}
	r.Conversation.SessionKey, r.Key = "agent:main:k", sessionkey.Key{Agent: "main", Chat: "k"}
	text, suppressed, stopped := s.Shape(context.Background(), Settings{Hooks: []string{"tg", "footer", "broken", "voice"}}, r)
	want := "Hello.\n— sent by clawhost\n\nMEDIA:/media/k/reply.ogg"
	if suppressed || stopped || text != want {
		t.Fatalf("shaped %q (suppressed %v), want %q", text, suppressed, want)
	}
	if strings.Join(h.saw, "|") != "footer: Hello.|broken: Hello.\n— sent by clawhost|voice: Hello.\n— sent by clawhost" {
		t.Fatalf("the hooks saw %q", h.saw)
	}
	if string(files.saved["/media/k/reply.ogg"]) != "ogg" || len(files.saved) != 1 {
		t.Fatalf("saved %v", files.saved)
	}
	h.saw = nil
	text, suppressed, _ = s.Shape(context.Background(), Settings{Hooks: []string{"mute", "footer"}}, r)
	if !suppressed || text != "" || len(h.saw) != 1 {
		t.Fatalf("suppress: %q %v after %q", text, suppressed, h.saw)
	}
}

// TestShapeWhileStopping: a reply that ends while the host stops is still
// shaped by a hook that answers; a hook that fails then (its plugin is
// stopping) makes the reply unrecordable instead of recorded unshaped.
func TestShapeWhileStopping(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{answer: map[string]func(hook.SendingRequest) (hook.SendingResponse, error){
		"redact": func(r hook.SendingRequest) (hook.SendingResponse, error) {
			return hook.SendingResponse{Rewrite: true, Text: strings.ReplaceAll(r.Text, "secret", "[redacted]")}, nil
		},
		"gone": func(hook.SendingRequest) (hook.SendingResponse, error) {
			return hook.SendingResponse{}, errors.New("plugin stopped")
		},
	}}
	s := New(h, &fakeFiles{saved: map[string][]byte{}}, nil, hclog.NewNullLogger())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if text, _, stopped := s.Shape(ctx, Settings{Hooks: []string{"redact"}}, Reply{Text: "the secret"}); stopped || text != "the [redacted]" {
		t.Fatalf("a hook answering during the stop: %q, stopped %v", text, stopped)
	}
	if text, _, stopped := s.Shape(ctx, Settings{Hooks: []string{"gone"}}, Reply{Text: "the secret"}); !stopped || text != "" {
		t.Fatalf("a hook failing during the stop: %q, stopped %v", text, stopped)
	}
	if _, _, stopped := s.Shape(context.Background(), Settings{Hooks: []string{"gone"}}, Reply{Text: "x"}); stopped {
		t.Fatal("a failing hook while running stopped the reply")
	}
}

// TestShapeHold: a failing hook with on_error = "hold" holds the reply:
// the chat is told once, the hook is asked again after 1 s, 2 s, … (the
// injected clock), and the reply goes on with the hook's rewrite once it
// answers — never unshaped; a host stopping while it is held makes the
// reply unrecordable (its turn runs again); without hold it is skipped.
func TestShapeHold(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	h := &fakeHooks{answer: map[string]func(hook.SendingRequest) (hook.SendingResponse, error){
		"redact": func(r hook.SendingRequest) (hook.SendingResponse, error) {
			if down.Load() {
				return hook.SendingResponse{}, errors.New("hook not running")
			}
			return hook.SendingResponse{Rewrite: true, Text: strings.ReplaceAll(r.Text, "SECRET", "[redacted]")}, nil
		},
	}}
	clk := tstimetest.NewFake(time.Unix(1_700_000_000, 0))
	s := New(h, &fakeFiles{saved: map[string][]byte{}}, clk, hclog.NewNullLogger())
	var held atomic.Int32
	s.ReportHeld(func(r Reply, inst string) {
		if inst == "redact" && r.ID == 5 {
			held.Add(1)
		}
	})
	set := Settings{Hooks: []string{"redact"}, Hold: map[string]bool{"redact": true}}
	type shaped struct {
		text              string
		suppressed, stopd bool
	}
	shape := func(ctx context.Context) chan shaped {
		out := make(chan shaped, 1)
		go func() {
			text, sup, stopped := s.Shape(ctx, set, Reply{ID: 5, Text: "the SECRET"})
			out <- shaped{text, sup, stopped}
		}()
		return out
	}
	out := shape(context.Background())
	for _, wait := range []time.Duration{FirstHoldRetry, 2 * FirstHoldRetry} {
		if !clk.BlockUntil(1, 10*time.Second) {
			t.Fatal("the held reply's retry was never armed")
		}
		select {
		case r := <-out:
			t.Fatalf("the reply went on while the hook failed: %+v", r)
		default:
		}
		if wait == 2*FirstHoldRetry {
			down.Store(false) // the hook is back for the second retry
		}
		clk.Advance(wait)
	}
	if r := <-out; r.text != "the [redacted]" || r.suppressed || r.stopd {
		t.Fatalf("the held reply came out as %+v, want the hook's rewrite", r)
	}
	if n := held.Load(); n != 1 {
		t.Errorf("the chat was told %d times that the reply is held, want once", n)
	}

	// The host stops while the reply is held: nothing to record.
	down.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	out = shape(ctx)
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the held reply's retry was never armed")
	}
	cancel()
	if r := <-out; !r.stopd || r.text != "" {
		t.Fatalf("a reply held while the host stops: %+v, want stopped", r)
	}
	// Without hold the failing hook is skipped.
	if text, _, stopped := s.Shape(context.Background(), Settings{Hooks: []string{"redact"}}, Reply{ID: 6, Text: "the SECRET"}); stopped || text != "the SECRET" {
		t.Fatalf("without hold: %q, stopped %v", text, stopped)
	}
}
