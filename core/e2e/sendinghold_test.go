package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// killScript is a message_sending program for the exec-hook plugin: it
// appends the pid of its plugin process and whether the text has the
// secret to $CALLS on every call and
// replaces SECRET-1234 with [redacted], except on the first call with the
// secret: then it writes that pid to $KILLME and waits, without answering,
// until its plugin process is gone.
const killScript = `#!/usr/bin/python3
import json, os, sys, time
req = json.load(sys.stdin)
ppid = os.getppid()
with open(os.environ["CALLS"], "a") as f:
    f.write("%d %s\n" % (ppid, "secret" if "SECRET-1234" in req["text"] else "other"))
if "SECRET-1234" in req["text"] and not os.path.exists(os.environ["KILLME"]):
    with open(os.environ["KILLME"] + ".tmp", "w") as f:
        f.write(str(ppid))
    os.rename(os.environ["KILLME"] + ".tmp", os.environ["KILLME"])
    deadline = time.monotonic() + 120
    while os.getppid() == ppid and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(1)
json.dump({"rewrite": True, "text": req["text"].replace("SECRET-1234", "[redacted]")}, sys.stdout)
`

// startRedacting starts a host with streaming = "draft", the turn card on
// and a redacting message_sending hook (on_error as given, "" for the
// default); down is the file that makes the hook fail.
func startRedacting(t *testing.T, onError string) (h *clHost, down string) {
	t.Helper()
	dir := t.TempDir()
	script, down := filepath.Join(dir, "redact.py"), filepath.Join(dir, "down")
	sdktest.WriteExecutable(t, script, []byte(redactScript), 0o700)
	return startSending(t, onError, script, map[string]string{"DOWN": down}), down
}

// startSending starts a host with streaming = "draft", the turn card on
// and the exec-hook plugin "redact" running script as its message_sending
// hook with env (on_error as given, "" for the default). hook_timeout is
// long enough that a call held for a kill is not timed out first.
func startSending(t *testing.T, onError, script string, env map[string]string) *clHost {
	t.Helper()
	p := Plugin{Name: "redact", Source: "exec-hook", Config: Attrs{"message_sending": []string{script}, "env": env}}
	if onError != "" {
		p.Attrs = Attrs{"on_error": onError}
	}
	return startClaudeHost(t, clOptions{messages: Attrs{"streaming": "draft", "turn_card": "auto", "hook_timeout": "30s"}, plugins: []Plugin{p}})
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

// TestSendingHookHoldKill9: the message_sending hook's plugin process is
// SIGKILLed while it holds the call for a reply with a secret; with
// on_error = "hold" the chat is told the answer is held, is never shown
// the secret, and gets the redacted reply from the restarted plugin.
func TestSendingHookHoldKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, calls, killme := filepath.Join(dir, "redact.py"), filepath.Join(dir, "calls"), filepath.Join(dir, "killme")
	sdktest.WriteExecutable(t, script, []byte(killScript), 0o700)
	h := startSending(t, "hold", script, map[string]string{"CALLS": calls, "KILLME": killme})
	from := h.mark()
	h.fake.Enqueue(secretReply)
	h.post("u1", "what is the code?")

	// The hook has the reply and has not answered: kill its plugin.
	var pid int
	sdktest.WaitFor(t, "the hook to hold the reply's call", func() error {
		b, err := os.ReadFile(killme)
		if err == nil {
			pid, err = strconv.Atoi(string(b))
		}
		return err
	})
	const restarting = "clawhost.redact: restarting plugin"
	restarts := strings.Count(h.log.String(), restarting)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the hook's plugin (pid %d): %v", pid, err)
	}
	sdktest.WaitFor(t, "the host to restart the hook's plugin", func() bool {
		return strings.Count(h.log.String(), restarting) > restarts
	})
	// The reply, in whatever form it comes: redacted, after the notice.
	end := waitShown(t, h, "chat-u1", from, "Here is the code")
	noSecret(t, h, "chat-u1", from)
	h.mu.Lock()
	shown := h.recs[from:end]
	if !slices.ContainsFunc(shown[:len(shown)-1], func(r clRecord) bool { return r.ChatID == "chat-u1" && strings.Contains(r.Text, "held") }) {
		t.Errorf("the chat was not told the answer is held before the reply")
	}
	if r := shown[len(shown)-1]; !strings.Contains(r.Text, "[redacted]") {
		t.Errorf("the reply is %q, want it redacted", r.Text)
	}
	h.mu.Unlock()

	// The killed process had the call; another one answered it.
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var secretCalls []string
	for _, l := range lines {
		if p, ok := strings.CutSuffix(l, " secret"); ok {
			secretCalls = append(secretCalls, p)
		}
	}
	if len(secretCalls) < 2 || secretCalls[0] != strconv.Itoa(pid) || secretCalls[len(secretCalls)-1] == strconv.Itoa(pid) {
		t.Errorf("the calls with the secret came from plugin pids %q: want the killed %d first, then a restarted one", secretCalls, pid)
	}
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
