package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// gateScript is a message_received program for the exec-hook plugin: it
// appends "<ROLE> <call id> <text>" to $CALLS for every call, then acts
// on words in the text — the "main" instance rewrites, adds a note,
// drops, kills its own plugin process or hangs; the "strict" instance
// hangs on hang-drop.
const gateScript = `#!/usr/bin/python3
import json, os, signal, sys, time
req = json.load(sys.stdin)
role, text = os.environ.get("ROLE", ""), req.get("text", "")
with open(os.environ["CALLS"], "a") as f:
    f.write("%s %s %s\n" % (role, req["call_id"], text.replace("\n", " ")))
def out(d):
    json.dump(d, sys.stdout)
if role == "main":
    if "rewrite-me" in text:
        out({"rewrite": True, "text": text.replace("rewrite-me", "REWRITTEN")})
    elif "note-me" in text:
        out({"notes": [{"label": "Hook note", "text": "added by the hook"}]})
    elif "drop-me" in text:
        out({"drop": True, "drop_reason": "Dropped by the gate."})
    elif "crash-me" in text:
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)
    elif "hang-skip" in text:
        time.sleep(60)
elif role == "strict" and "hang-drop" in text:
    time.sleep(60)
`

// hookHost starts clawhost with the real claude CLI (echoing through the
// fake API) behind the loopback channel, and two exec-hook instances
// running gateScript in order: "main" (on_error skip) and "strict"
// (on_error drop). lo is the loopback's host settings.
func hookHost(t *testing.T, lo Attrs) (*clHost, string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "gate.py")
	sdktest.WriteExecutable(t, script, []byte(gateScript), 0o700)
	calls := filepath.Join(dir, "calls.log")
	hookPlugin := func(name, role, onError string) Plugin {
		return Plugin{Name: name, Source: "exec-hook", Attrs: Attrs{"on_error": onError},
			Config: Attrs{"message_received": []string{script}, "env": map[string]string{"ROLE": role, "CALLS": calls}}}
	}
	h := startClaudeHost(t, clOptions{
		senders:  []string{"u1", "u2", "u3", "u4", "u5", "u6", "u7"},
		lo:       lo,
		messages: Attrs{"streaming": "off", "turn_card": "off", "hook_timeout": "8s"},
		plugins:  []Plugin{hookPlugin("main", "main", "skip"), hookPlugin("strict", "strict", "drop")},
	})
	return h, calls
}

// callsFor returns the lines of the calls log whose text contains word.
func callsFor(t *testing.T, calls, word string) []string {
	t.Helper()
	b, err := os.ReadFile(calls)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return out
}

// apiSaw reports whether any request to the fake API carried word.
func apiSaw(h *clHost, word string) bool {
	for _, r := range h.fake.Requests() {
		for _, u := range r.UserTexts() {
			if strings.Contains(u, word) {
				return true
			}
		}
	}
	return false
}

// TestMessageReceivedHooks: message_received hooks, through the real
// binary, the exec-hook plugin and the real claude CLI: a rewrite and a
// note reach claude (its echo shows them) and the original does not; a
// drop tells the sender the hook's reason and claude never sees it; a
// hanging hook with on_error "skip" delays only its own chat (another
// chat is answered meanwhile) and the message goes on; one with "drop"
// drops it and tells the sender; a hook whose plugin process dies is
// skipped.
func TestMessageReceivedHooks(t *testing.T) {
	t.Parallel()
	h, calls := hookHost(t, nil)
	within := 90 * time.Second

	from := h.mark()
	h.post("u1", "please rewrite-me now")
	r, _ := h.waitSend("chat-u1", from, within)
	if !strings.Contains(r.Text, "please REWRITTEN now") || strings.Contains(r.Text, "rewrite-me") {
		t.Fatalf("the rewrite did not reach claude: %q", r.Text)
	}
	if apiSaw(h, "rewrite-me") {
		t.Fatal("claude saw the original text")
	}
	if got := callsFor(t, calls, "rewrite-me"); len(got) != 1 || !strings.HasPrefix(got[0], "main ") {
		t.Fatalf("main's calls for the message: %q, want one", got)
	}
	if got := callsFor(t, calls, "REWRITTEN"); len(got) != 1 || !strings.HasPrefix(got[0], "strict ") {
		t.Fatalf("strict did not see main's rewrite: %q", got)
	}

	from = h.mark()
	h.post("u2", "note-me please")
	r, _ = h.waitSend("chat-u2", from, within)
	if !strings.Contains(r.Text, "[Hook note]") || !strings.Contains(r.Text, "added by the hook") {
		t.Fatalf("the note did not reach claude: %q", r.Text)
	}

	from = h.mark()
	h.post("u3", "drop-me quietly")
	r, _ = h.waitSend("chat-u3", from, within)
	if r.Text != "Dropped by the gate." {
		t.Fatalf("the sender was told %q, want the hook's reason", r.Text)
	}
	if apiSaw(h, "drop-me") {
		t.Fatal("claude saw a dropped message")
	}
	if got := callsFor(t, calls, "drop-me"); len(got) != 1 {
		t.Fatalf("hook calls after the drop: %q (strict must not be asked)", got)
	}

	// A hang in one chat does not hold another: u5's message reaches
	// claude while u4's hook still hangs (its skip is logged 8s later).
	from = h.mark()
	h.post("u4", "hang-skip here")
	h.post("u5", "meanwhile hello")
	h.waitSend("chat-u5", from, within)
	if strings.Contains(h.log.String(), "message_received hook failed; skipped") {
		t.Fatal("the other chat was answered only after the hanging hook timed out")
	}
	r, _ = h.waitSend("chat-u4", from, within)
	if !strings.Contains(r.Text, "hang-skip here") {
		t.Fatalf("a hook that timed out with on_error skip: the reply is %q, want the message answered", r.Text)
	}

	from = h.mark()
	h.post("u6", "hang-drop there")
	r, _ = h.waitSend("chat-u6", from, within)
	if !strings.Contains(r.Text, "could not be handled") {
		t.Fatalf("a hook that timed out with on_error drop: the sender was told %q", r.Text)
	}
	if apiSaw(h, "hang-drop") {
		t.Fatal("claude saw a message dropped on a hook's failure")
	}

	from = h.mark()
	h.post("u7", "crash-me hard")
	r, _ = h.waitSend("chat-u7", from, within)
	if !strings.Contains(r.Text, "crash-me hard") {
		t.Fatalf("a hook whose plugin died: the reply is %q, want the message answered", r.Text)
	}
}

// TestMessageReceivedKill9: clawhost is SIGKILLed after the hooks answered
// a message and before it reached the queue (it waits in a long debounce
// window); after the restart the message is answered once, with the
// rewrite, and no hook is asked again.
func TestMessageReceivedKill9(t *testing.T) {
	t.Parallel()
	h, calls := hookHost(t, Attrs{"debounce": "10m"})
	h.post("u1", "rewrite-me before the crash")
	sdktest.WaitFor(t, "the message_received hooks to decide", func() bool {
		return strings.Contains(h.log.String(), "message_received hooks decided")
	})
	if h.fake.Count() != 0 {
		t.Fatal("the message reached claude before the kill; the debounce window did not hold it")
	}
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.cmd.Wait()
	h.stopPoll()
	<-h.pollDone

	// The same host, without the debounce window.
	editFile(t, h.cfgPath, `"10m"`, `"0s"`) // the debounce attribute
	h.start()
	r, next := h.waitSend("chat-u1", 0, 90*time.Second)
	if !strings.Contains(r.Text, "REWRITTEN before the crash") {
		t.Fatalf("after the restart the reply is %q, want the rewritten message", r.Text)
	}
	if got := callsFor(t, calls, "before the crash"); len(got) != 2 {
		t.Fatalf("hook calls: %q, want one per hook (asked once, before the kill)", got)
	}
	// On purpose: a second answer would come within these 3 s.
	settle := time.Now().Add(3 * time.Second)
	for time.Now().Before(settle) {
		if more := h.sends("chat-u1", next); len(more) > 0 {
			t.Fatalf("answered twice: %q", more[0].Text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signScript is a message_sending and agent_end program for the
// exec-hook plugin. As message_sending it logs each call to $CALLS,
// suppresses a reply with suppress-me, adds the file $FILE to one with
// attach-me, and signs every other; as agent_end it logs the event.
const signScript = `#!/usr/bin/python3
import json, os, sys
req = json.load(sys.stdin)
if os.environ["CLAWHOST_HOOK"] == "agent_end":
    with open(os.environ["CALLS"], "a") as f:
        f.write("end %s %s %s\n" % (req["call_id"], req["outcome"], req["reply_text"].replace("\n", " ")))
    sys.exit(0)
text = req["text"]
with open(os.environ["CALLS"], "a") as f:
    f.write("sending %s %s\n" % (req["call_id"], text.replace("\n", " ")))
if "suppress-me" in text:
    json.dump({"suppress": True}, sys.stdout)
elif "attach-me" in text:
    json.dump({"rewrite": True, "text": text + "\n-- signed", "media": [{"path": os.environ["FILE"]}]}, sys.stdout)
else:
    json.dump({"rewrite": True, "text": text + "\n-- signed"}, sys.stdout)
`

// TestMessageSendingHooks: a message_sending hook through the real binary
// and CLI rewrites the reply that is sent, adds a file that is sent with
// it, and suppresses a reply (nothing is sent; the chat's next message is
// answered), each reply shown to the hook once; the agent_end hook hears
// of each turn with the reply as recorded.
func TestMessageSendingHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, calls, file := filepath.Join(dir, "sign.py"), filepath.Join(dir, "calls.log"), filepath.Join(dir, "table.txt")
	sdktest.WriteExecutable(t, script, []byte(signScript), 0o700)
	if err := os.WriteFile(file, []byte("a | b\n1 | 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startClaudeHost(t, clOptions{
		messages: Attrs{"streaming": "off", "turn_card": "off", "hook_timeout": "20s"},
		plugins: []Plugin{{Name: "sign", Source: "exec-hook",
			Config: Attrs{"message_sending": []string{script}, "agent_end": []string{script}, "env": map[string]string{"CALLS": calls, "FILE": file}}}},
	})
	within := 90 * time.Second

	from := h.mark()
	h.post("u1", "hello there")
	r, from := h.waitSend("chat-u1", from, within)
	if !strings.Contains(r.Text, "hello there") || !strings.HasSuffix(r.Text, "-- signed") {
		t.Fatalf("the reply sent is %q, want the hook's rewrite", r.Text)
	}

	h.post("u1", "attach-me please")
	var media []string
	for len(media) == 0 {
		r, from = h.waitSend("chat-u1", from, within)
		media = r.Media
	}
	if len(media) != 1 || !strings.HasSuffix(media[0], ".txt") {
		t.Fatalf("the hook's file was not sent: media %q", media)
	}

	h.post("u1", "suppress-me now")
	h.post("u1", "and after that")
	r, from = h.waitSend("chat-u1", from, within)
	if strings.Contains(r.Text, "suppress-me") || !strings.Contains(r.Text, "and after that") {
		t.Fatalf("the next send is %q, want the suppressed reply left out", r.Text)
	}
	if got := callsFor(t, calls, "suppress-me"); len(got) != 1 {
		t.Fatalf("calls for the suppressed reply: %q, want one", got)
	}
	if got := callsFor(t, calls, "sending 1 "); len(got) != 1 || !strings.Contains(got[0], "hello there") {
		t.Fatalf("calls for the first reply: %q, want one", got)
	}
	// agent_end is delivered in the background: wait for the events of
	// the first turn (the signed reply) and the suppressed one.
	sdktest.WaitFor(t, "three agent_end events", func() error {
		got := callsFor(t, calls, "end ")
		return sdktest.Saw(len(got) >= 3, "agent_end events %q", got)
	})
	if got := callsFor(t, calls, "end 1 "); len(got) != 1 || !strings.Contains(got[0], " ok ") || !strings.Contains(got[0], "-- signed") {
		t.Fatalf("agent_end of the first turn: %q", got)
	}
	if got := callsFor(t, calls, "no_reply"); len(got) != 1 {
		t.Fatalf("agent_end of the suppressed turn: %q", got)
	}
}

// TestPluginTestLifecycleHooks: `clawhost plugin schema` names the hook
// kinds the exec-hook example offers; `clawhost plugin test` runs the
// checks of each — answered within
// the timeout, the same answer to a repeated call id — and a program that
// answers differently each time fails the message_received check.
func TestPluginTestLifecycleHooks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(binDir(t), "clawhost-exec-hook")
	code, out, errs := runPluginTest(t, path)
	for _, check := range []string{"message_received", "message_sending", "agent_end"} {
		if !strings.Contains(out, check) {
			t.Errorf("no %s check:\n%s", check, out)
		}
	}
	if code != 0 {
		t.Fatalf("exit %d, want every check passed:\n%s\nstderr:\n%s", code, out, errs)
	}
	schema, err := exec.Command(filepath.Join(binDir(t), "clawhost"), "plugin", "schema", path).CombinedOutput()
	if err != nil {
		t.Fatalf("plugin schema: %v: %s", err, schema)
	}
	for _, want := range []string{"offers:", "message_received  sees each inbound message", "message_sending   sees each agent reply", "agent_end         hears of each finished turn", "config {} of clawhost-exec-hook"} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("plugin schema shows no %q:\n%s", want, schema)
		}
	}
	dir := t.TempDir()
	flaky := filepath.Join(dir, "flaky.sh")
	script := "#!/bin/sh\ncat >/dev/null\nprintf '{\"rewrite\": true, \"text\": \"%s\"}' \"$(date +%N)\"\n"
	sdktest.WriteExecutable(t, flaky, []byte(script), 0o700)
	code, out, _ = runPluginTest(t, "-config-json", `{"message_received":["`+flaky+`"]}`, path)
	if code == 0 || !strings.Contains(out, "a repeated call id got another answer") {
		t.Fatalf("a hook that answers a repeated call id differently passed (exit %d):\n%s", code, out)
	}
}

// endScript is an agent_end program for the exec-hook plugin: it logs
// each call to $CALLS and fails until the file $READY exists.
const endScript = `#!/bin/sh
in=$(cat)
id=$(printf '%s' "$in" | sed -n 's/.*"call_id":"\([^"]*\)".*/\1/p')
echo "end $id" >> "$CALLS"
[ -e "$READY" ]
`

// TestAgentEndAcrossKill9: an agent_end event whose hook keeps failing is
// kept while the host runs and after a kill -9: the restarted host
// delivers it, with the same call id, once the hook answers.
func TestAgentEndAcrossKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, calls, ready := filepath.Join(dir, "end.sh"), filepath.Join(dir, "calls.log"), filepath.Join(dir, "ready")
	sdktest.WriteExecutable(t, script, []byte(endScript), 0o700)
	h := startClaudeHost(t, clOptions{
		messages: Attrs{"streaming": "off", "turn_card": "off", "hook_timeout": "5s"},
		plugins: []Plugin{{Name: "log", Source: "exec-hook",
			Config: Attrs{"agent_end": []string{script}, "env": map[string]string{"CALLS": calls, "READY": ready}}}},
	})
	h.post("u1", "hello")
	h.waitSend("chat-u1", 0, 90*time.Second)
	sdktest.WaitFor(t, "the agent_end hook's call", func() bool { return len(callsFor(t, calls, "end 1")) > 0 })
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.cmd.Wait()
	h.stopPoll()
	<-h.pollDone
	if _, err := os.Stat(filepath.Join(h.dir, "data", "agent-end", "1.json")); err != nil {
		t.Fatalf("the event is not kept for the restart: %v", err)
	}
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(callsFor(t, calls, "end 1"))
	h.start()
	sdktest.WaitFor(t, "the kept event's delivery after the restart", func() error {
		_, err := os.Stat(filepath.Join(h.dir, "data", "agent-end", "1.json"))
		return sdktest.Saw(len(callsFor(t, calls, "end 1")) > before && os.IsNotExist(err), "calls %q, the kept event: %v", callsFor(t, calls, "end "), err)
	})
	if got := callsFor(t, calls, "end "); len(got) != len(callsFor(t, calls, "end 1")) {
		t.Fatalf("calls for other turns: %q", got)
	}
}
