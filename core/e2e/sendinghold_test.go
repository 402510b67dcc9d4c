package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// redactScript is a message_sending program for the exec-hook plugin: it
// replaces SECRET-1234 with [redacted], and fails (exit 1) while the file
// $DOWN exists.
const redactScript = `#!/usr/bin/python3
import json, os, sys
req = json.load(sys.stdin)
if os.path.exists(os.environ["DOWN"]):
    sys.exit(1)
json.dump({"rewrite": True, "text": req["text"].replace("SECRET-1234", "[redacted]")}, sys.stdout)
`

// secretReply is claude's answer with the secret, streamed in pieces so
// that a draft would show it before the end.
var secretReply = anthropictest.Reply{Text: "Here is the code you asked for: SECRET-1234. Keep it to yourself, and do not write it down anywhere.",
	Chunks: 8, ChunkDelay: 250 * time.Millisecond}

// startRedacting starts a host with streaming = "draft", the turn card on
// and a redacting message_sending hook (on_error as given, "" for the
// default); down is the file that makes the hook fail.
func startRedacting(t *testing.T, onError string) (h *clHost, down string) {
	t.Helper()
	dir := t.TempDir()
	script, down := filepath.Join(dir, "redact.py"), filepath.Join(dir, "down")
	sdktest.WriteExecutable(t, script, []byte(redactScript), 0o700)
	p := Plugin{Name: "redact", Source: "exec-hook", Config: Attrs{"message_sending": []string{script}, "env": map[string]string{"DOWN": down}}}
	if onError != "" {
		p.Attrs = Attrs{"on_error": onError}
	}
	h = startClaudeHost(t, clOptions{messages: Attrs{"streaming": "draft", "turn_card": "auto", "hook_timeout": "10s"}, plugins: []Plugin{p}})
	return h, down
}

// noSecret fails the test when anything shown in chat (a send or an edit)
// since record from held the secret.
func noSecret(t *testing.T, h *clHost, chat string, from int) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs[min(from, len(h.recs)):] {
		if r.ChatID == chat && strings.Contains(r.Text, "SECRET-1234") {
			t.Errorf("the chat was shown the unredacted secret (%s): %q", r.Op, r.Text)
		}
	}
}

// TestSendingHookDraftsSeeNoUnshapedText: with a message_sending hook
// configured, streaming = "draft" and the turn card show nothing the hook
// has not seen: the streamed answer is never shown as a draft, and the
// reply comes redacted.
func TestSendingHookDraftsSeeNoUnshapedText(t *testing.T) {
	t.Parallel()
	h, _ := startRedacting(t, "")
	from := h.mark()
	h.fake.Enqueue(secretReply)
	h.post("u1", "what is the code?")
	waitShown(t, h, "chat-u1", from, "[redacted]")
	noSecret(t, h, "chat-u1", from)
}

// TestSendingHookHold: a message_sending hook with on_error = "hold" that
// fails while a reply with a secret is due holds the reply: the chat is
// told it is held, is never shown the secret, and gets the redacted reply
// once the hook answers again.
func TestSendingHookHold(t *testing.T) {
	t.Parallel()
	h, down := startRedacting(t, "hold")
	if err := os.WriteFile(down, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	from := h.mark()
	h.fake.Enqueue(secretReply)
	h.post("u1", "what is the code?")
	next := waitShown(t, h, "chat-u1", from, "held")
	// Held for a while (the hook is asked again after 1 s, 2 s, 4 s).
	time.Sleep(3 * time.Second) // on purpose: the reply must not come while the hook fails
	h.mu.Lock()
	for _, r := range h.recs[next:] {
		if r.ChatID == "chat-u1" && strings.Contains(r.Text, "Here is the code") {
			t.Errorf("the reply was shown while its hook failed (%s): %q", r.Op, r.Text)
		}
	}
	h.mu.Unlock()
	if err := os.Remove(down); err != nil {
		t.Fatal(err)
	}
	waitShown(t, h, "chat-u1", next, "[redacted]")
	noSecret(t, h, "chat-u1", from)
}

// waitShown waits until chat is shown (sent or edited) a text containing
// want at record index from or later, and returns the index after it.
func waitShown(t *testing.T, h *clHost, chat string, from int, want string) int {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		h.mu.Lock()
		for i := from; i < len(h.recs); i++ {
			if r := h.recs[i]; r.ChatID == chat && strings.Contains(r.Text, want) {
				h.mu.Unlock()
				return i + 1
			}
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s was not shown %q within 90s", chat, want)
			return 0
		}
	}
}
