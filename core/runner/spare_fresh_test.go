package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/sparedir"
)

// Sandboxed, a spare started for brand-new chats has directories of its own: before a
// chat adopts it, its sandbox shows no chat's media (the attack: a spare must not be a
// window on the chats it may serve); the brand-new chat that adopts it takes its
// directories over — what claude wrote to its state is the chat's, an attachment the
// host saves for the chat later is read at the path the prompt names — a chat that has
// claude state of its own does not adopt it, one whose first message brought an
// attachment does (the attachment carried into the spare's directory), and when the
// processes end the spare's leave no directory and the adopted ones' only the chats'.
func TestSpareSandboxedBrandNewChat(t *testing.T) {
	needBwrap(t)
	ws, data := t.TempDir(), t.TempDir()
	r, ready, closeRunner := sandboxedSpares(t, ws, data)
	tools := &recordingTools{dir: t.TempDir(), dropped: make(chan string, 8)}
	turn := func(key, session, prompt string) Result {
		t.Helper()
		req := lateSession(tools, key)
		req.MediaDir, req.Prompt = "m"+key, prompt
		if session != "" {
			req.SessionID, req.NewSession, req.AdoptSpare = session, false, false
		}
		res := runTurn(t, r, req)
		if res.Err != nil {
			t.Fatalf("chat %s: %+v %q", key, res.Err, res.Text)
		}
		return res
	}
	nextSpare := func() *proc {
		t.Helper()
		select {
		case sp := <-ready:
			if sp == nil {
				t.Fatal("the spare was given up")
			}
			return sp
		case <-time.After(30 * time.Second):
			t.Fatal("no spare started")
		}
		return nil
	}
	must(t, os.MkdirAll(filepath.Join(ws, "media", "ma"), 0o700)) // empty: brand-new all the same
	turn("a", "", "sh:echo a")
	turn("b", "", "sh:echo b")
	sp := nextSpare()
	if sp.own == nil || !sparedir.IsSpare(sp.own.Name()) {
		t.Fatalf("the spare for brand-new chats has no directories of its own: %+v", sp.own)
	}

	res := turn("c", "", "sh:ls -A "+filepath.Join(ws, "media")+" && echo x > $CLAUDE_CONFIG_DIR/c1 && echo wrote")
	if res.Wait.Start != StartSpare || res.PID != sp.pid {
		t.Fatalf("brand-new chat c: start %q pid %d, the spare %d", res.Wait.Start, res.PID, sp.pid)
	}
	if strings.Contains(res.Text, "ma") || strings.Contains(res.Text, "mb") || strings.Contains(res.Text, "md") || !strings.Contains(res.Text, sp.own.Name()) || !strings.Contains(res.Text, "wrote") {
		t.Fatalf("what the adopted spare's sandbox shows under media: %q, want its own directory only", res.Text)
	}
	if _, err := os.Stat(filepath.Join(data, "runner", "chats", "c", "c1")); err != nil {
		t.Fatalf("what claude wrote to its state is not chat c's: %v", err)
	}
	if link, err := os.Readlink(sp.own.Media); err != nil || link != "mc" {
		t.Fatalf("the spare's media path on the host: %q %v, want a link to mc", link, err)
	}
	must(t, os.WriteFile(filepath.Join(ws, "media", "mc", "photo.txt"), []byte("the photo"), 0o600))
	res = turn("c", res.SessionID, "sh:cat "+filepath.Join(ws, "media", "mc", "photo.txt"))
	if res.Wait.Start != StartWarm || res.PID != sp.pid || !strings.Contains(res.Text, "the photo") {
		t.Fatalf("chat c's attachment on the adopted spare: start %q pid %d text %q", res.Wait.Start, res.PID, res.Text)
	}

	next := nextSpare() // the adoption's replacement
	must(t, os.MkdirAll(filepath.Join(data, "runner", "chats", "d"), 0o700))
	must(t, os.WriteFile(filepath.Join(data, "runner", "chats", "d", "own.jsonl"), nil, 0o600))
	if res := turn("d", "", "sh:echo d"); res.Wait.Start == StartSpare || res.PID == next.pid {
		t.Fatalf("chat d, which has claude state, adopted the brand-new chats' spare")
	}
	if _, err := os.Lstat(next.own.Media); err != nil {
		t.Fatalf("the spare chat d did not adopt lost its directory: %v", err)
	}
	// Chat e's first message brought an attachment (saved before its turn): carried over.
	must(t, os.MkdirAll(filepath.Join(ws, "media", "me"), 0o700))
	must(t, os.WriteFile(filepath.Join(ws, "media", "me", "photo.txt"), []byte("e's photo"), 0o600))
	if res := turn("e", "", "sh:cat "+filepath.Join(ws, "media", "me", "photo.txt")); res.Wait.Start != StartSpare || res.PID != next.pid || !strings.Contains(res.Text, "e's photo") {
		t.Fatalf("chat e, its first message with an attachment: start %q pid %d (the spare %d) text %q", res.Wait.Start, res.PID, next.pid, res.Text)
	}
	closeRunner()
	for _, p := range []string{sp.own.Media, next.own.Media, next.own.State} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s outlives its process", p)
		}
	}
	for _, p := range []string{filepath.Join(ws, "media", "mc", "photo.txt"), filepath.Join(data, "runner", "chats", "c", "c1"), filepath.Join(ws, "media", "me", "photo.txt")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("chat c's %s: %v", p, err)
		}
	}
}

// sandboxedSpares is a runner of the fake claude, sandboxed, with spares, its workspace
// ws and its state and claude's config under data; ready gets each spare put in the pool
// (nil for one given up); stop closes it (once, also at the test's end).
func sandboxedSpares(t *testing.T, ws, data string) (r *Runner, ready chan *proc, stop func()) {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	r, err = New(Config{
		Command: exe, Workspace: ws, StateDir: filepath.Join(data, "runner"), ConfigDir: filepath.Join(data, "claude"),
		Env:  map[string]string{"FAKE_CLAUDE": "1", "FAKE_CLAUDE_STATE": filepath.Join(ws, "state")},
		Hide: []string{data}, Sandbox: SandboxAuto, Timeout: 10 * time.Second, KillGrace: 300 * time.Millisecond,
		Spare: true, WarmMemory: NoWarmMemoryLimit,
	}, nil)
	must(t, err)
	ready = make(chan *proc, 4)
	r.mu.Lock()
	r.spares.ready = func(p *proc) { ready <- p }
	r.mu.Unlock()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = r.Close(ctx)
		})
	}
	t.Cleanup(stop)
	return r, ready, stop
}
