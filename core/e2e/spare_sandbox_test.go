package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestClaudeHostSpareNewChatSandboxed (issue 84, goal 2): with the sandbox on, a
// brand-new chat's first message runs on the agent's spare claude, whose sandbox was
// made before the chat was known, with directories of its own. Through the real
// binary, the real CLI and the fake API, as root (claude as root, and as nobody with
// agent.run_as) and with the host run as nobody:
//   - the attack, first: the spare's sandbox shows no chat's media, only its own
//     directory — not the two chats whose new sessions started it;
//   - a third person's first message, with an attachment, is answered by the spare (its
//     process and session), and the attachment is carried over: named and read at the
//     spare's path;
//   - an attachment of that chat's, saved after the adoption, is named in the prompt at
//     the path the sandbox shows, and claude reads it there;
//   - a reply naming that path sends the chat's own file back, and another chat's reply
//     naming it is refused (the host's link is no way into another chat's media);
//   - the chat's claude, killed, resumes the spare's session from the chat's own claude
//     state, and the spare's path is gone from the host; so does the chat after the host
//     itself was killed -9.
func TestClaudeHostSpareNewChatSandboxed(t *testing.T) {
	t.Parallel()
	lpNeedBwrap(t)
	t.Run("root", func(t *testing.T) { t.Parallel(); testSpareNewChatSandboxed(t, sandboxRun{}, false) })
	t.Run("root, bwrap per start", func(t *testing.T) { t.Parallel(); testSpareNewChatSandboxed(t, sandboxRun{helper: "0"}, false) })
	t.Run("nobody", func(t *testing.T) { t.Parallel(); testSpareNewChatSandboxed(t, sandboxRun{user: "nobody"}, false) })
	t.Run("root, run_as nobody", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("run_as needs clawhost to run as root")
		}
		testSpareNewChatSandboxed(t, sandboxRun{}, true)
	})
	t.Run("root, run_as nobody, bwrap per start", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("run_as needs clawhost to run as root")
		}
		testSpareNewChatSandboxed(t, sandboxRun{helper: "0"}, true)
	})
}

func testSpareNewChatSandboxed(t *testing.T, run sandboxRun, runAs bool) {
	o := clOptions{agent: Attrs{"allowed_tools": []string{"Bash"}}, senders: []string{"u1", "u2", "u3"}}
	if runAs {
		o.agent["run_as"] = "nobody"
		o.setup = func(dir string) { lpPrepareRunAs(t, dir, filepath.Join(dir, "workspace")) }
	}
	h, mode := run.startHost(t, o)
	if !strings.HasPrefix(mode, "bubblewrap") {
		t.Fatalf("sandbox %q", mode)
	}
	ws := filepath.Join(h.dir, "workspace")
	pool := h.warmPool()
	h.fake.Enqueue(anthropictest.Reply{Text: "Hello one."})
	h.say("u1", "hello from one")
	h.fake.Enqueue(anthropictest.Reply{Text: "Hello two."})
	h.say("u2", "hello from two")
	spare, argv := waitSpare(t, h, pool, 3)
	spareSession := argOf(argv, "--session-id")

	// The first message brings an attachment: saved before the turn in the chat's media
	// directory, carried into the spare's when the chat adopts it.
	before := h.fake.Count()
	media := filepath.Join(ws, "media")
	h.fake.Enqueue(bashRun("ls -A " + media + "; echo listed-media; cat " + media + "/*/*")...)
	h.sayWith("u3", "what do you see", map[string]any{"media": []map[string]any{{"kind": "document", "ref": "data:the first note", "filename": "first.txt"}}})
	if s := h.request(before+1, time.Second).Header.Get("x-claude-code-session-id"); s != spareSession {
		t.Fatalf("the brand-new chat ran in session %s, the spare's is %s", s, spareSession)
	}
	if !alive(spare) {
		t.Fatalf("the spare %d is gone: it did not answer", spare)
	}
	out := lpToolResultWith(t, h, "listed-media")
	listed, rest, _ := strings.Cut(out, "listed-media")
	listing := strings.Fields(listed)
	if len(listing) != 1 || !strings.HasPrefix(listing[0], "+spare-") {
		t.Fatalf("the spare's sandbox shows %q under media, want its own directory only", listing)
	}
	own := listing[0]
	if !strings.Contains(rest, "the first note") || !strings.Contains(h.request(before+1, time.Second).LastUserText(), filepath.Join(media, own)+"/") {
		t.Fatalf("the first message's attachment, carried over: read %q; prompt %q", rest, h.request(before+1, time.Second).LastUserText())
	}

	before = h.fake.Count()
	h.fake.Enqueue(bashRun("cat " + filepath.Join(ws, "media", own) + "/*; echo read-note")...)
	h.sayWith("u3", "read my note", map[string]any{"media": []map[string]any{{"kind": "document", "ref": "data:the kettle note", "filename": "note.txt"}}})
	prompt := h.request(before+1, time.Second).LastUserText()
	named := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(ws, "media", own)+"/") + `[^\s"'\]\)]+`).FindString(prompt)
	if named == "" {
		t.Fatalf("the prompt does not name the attachment at the spare's path %s:\n%s", own, prompt)
	}
	if note := lpToolResultWith(t, h, "read-note"); !strings.Contains(note, "the kettle note") {
		t.Fatalf("claude could not read the attachment at %s: %q", named, note)
	}

	m := h.mark()
	h.fake.Enqueue(anthropictest.Reply{Text: "Here it is.\nMEDIA: " + named})
	h.post("u3", "send it back")
	sdktest.WaitFor(t, "the note sent back to chat u3", func() error {
		for _, r := range h.sends("chat-u3", m) {
			if len(r.Media) == 1 {
				return nil
			}
		}
		return sdktest.Saw(false, "sends %+v", h.sends("chat-u3", m))
	})
	m = h.mark()
	h.fake.Enqueue(anthropictest.Reply{Text: "Stolen.\nMEDIA: " + named})
	h.post("u1", "steal it")
	got, _ := h.waitSend("chat-u1", m, 60*time.Second)
	for _, r := range h.sends("chat-u1", m) {
		if len(r.Media) != 0 {
			t.Fatalf("chat u3's attachment reached chat u1 by the spare's path: %+v", r)
		}
	}
	if !strings.Contains(got.Text+strings.Join(textsOf(h.sends("chat-u1", m)), "\n"), "another conversation") {
		t.Errorf("chat u1 is not told why the file was not sent: %q", textsOf(h.sends("chat-u1", m)))
	}

	if err := syscall.Kill(spare, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the spare's path gone from the host", func() error {
		_, err := os.Lstat(filepath.Join(ws, "media", own))
		return sdktest.Saw(os.IsNotExist(err), "%s: %v", own, err)
	})
	before = h.fake.Count()
	h.fake.Enqueue(anthropictest.Reply{Text: "Still here."})
	h.say("u3", "are you still there")
	r := h.request(before+1, time.Second)
	if s := r.Header.Get("x-claude-code-session-id"); s != spareSession {
		t.Fatalf("after its claude was killed chat u3 ran in session %s, want the spare's %s", s, spareSession)
	}
	if u := strings.Join(r.UserTexts(), "\n"); !strings.Contains(u, "what do you see") {
		t.Fatalf("the resumed session lost the chat's conversation: %q", u)
	}

	// The host killed -9 (its claudes, the replacement spare among them, with it): after
	// the restart the chat resumes the same session from its own claude state.
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.cmd.Wait()
	h.stopPoll()
	<-h.pollDone
	h.start()
	before = h.fake.Count()
	h.fake.Enqueue(anthropictest.Reply{Text: "Back again."})
	h.say("u3", "and after a restart")
	r = h.request(before+1, time.Second)
	if s := r.Header.Get("x-claude-code-session-id"); s != spareSession {
		t.Fatalf("after the host's kill -9 chat u3 ran in session %s, want the spare's %s", s, spareSession)
	}
	if u := strings.Join(r.UserTexts(), "\n"); !strings.Contains(u, "what do you see") || !strings.Contains(u, "are you still there") {
		t.Fatalf("after the host's kill -9 the session lost the chat's conversation: %q", u)
	}
}

func textsOf(rs []clRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Text)
	}
	return out
}

// waitPool waits until the host's warm pool, as its status endpoint says it, is as ok
// wants (the host runs with clOptions.status).
func waitPool(t *testing.T, h *clHost, what string, ok func(admin.WarmPool) bool) {
	t.Helper()
	pool := h.warmPool()
	sdktest.WaitFor(t, what, func() error {
		p := pool()
		return sdktest.Saw(ok(p), "pool %+v", p)
	})
}

// warmPool reads the host's warm pool from its status endpoint (the host runs with
// clOptions.status); the zero pool while the endpoint does not answer.
func (h *clHost) warmPool() func() admin.WarmPool {
	h.t.Helper()
	cfg, diags := config.Load(h.cfgPath)
	if diags.HasErrors() {
		h.t.Fatal(diags)
	}
	return func() admin.WarmPool {
		snap, err := fetchStatus(cfg)
		if err != nil || snap.WarmPool == nil {
			return admin.WarmPool{}
		}
		return *snap.WarmPool
	}
}
