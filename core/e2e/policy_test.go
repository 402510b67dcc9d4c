package e2e

// Policy is the operator's, end to end: the real clawhost binary, the real
// clawhost-telegram plugin against the fake Bot API and the real claude
// CLI against the fake Anthropic API, whose model runs Bash on a file
// outside the workspace (a use claude asks permission for). Alice
// (tg:1001) is allowed but no owner; Olga (tg:3003) is the owner.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const tgOlga = 3003

// policyEnv is a running daemon: instance "tg", the real claude, Alice
// allowed and Olga the owner.
type policyEnv struct {
	t       *testing.T
	fake    *anthropictest.Server
	srv     *telegramtest.Server
	outside string
}

func newPolicyEnv(t *testing.T, agentExtra Attrs) *policyEnv {
	t.Helper()
	claude := clClaudeBin(t)
	e := &policyEnv{t: t, fake: anthropictest.New(), srv: telegramtest.NewServer(tgToken), outside: t.TempDir()}
	t.Cleanup(e.fake.Close)
	t.Cleanup(e.srv.Close)
	dir := t.TempDir()
	agent := Attrs{"workspace": filepath.Join(dir, "workspace"), "timeout": "60s",
		"sandbox": "off"} // the commands write outside the workspace, which the sandbox makes read-only
	for k, v := range agentExtra {
		agent[k] = v
	}
	h := Host{
		Dir:      dir,
		Agent:    RealClaude(claude, filepath.Join(dir, "home"), e.fake.URL(), agent),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:3003"}},
		Admin:    Attrs{"listen": ""},
		Messages: Attrs{"streaming": "blocks"},
		Plugins:  []Plugin{tgPlugin(e.srv.APIEndpoint())},
	}
	cfg := h.Write(t)
	Launch(t, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(e.srv))
		}
	})
	sdktest.WaitFor(t, "the plugin's first getUpdates", func() bool { return len(e.srv.Requests("getUpdates")) > 0 })
	return e
}

// bash is the model running command.
func bash(command string) anthropictest.Reply {
	return anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": command, "description": "do it"}}}
}

func (e *policyEnv) exists(name string) bool {
	_, err := os.Stat(filepath.Join(e.outside, name))
	return err == nil
}

// asked reports whether any of the bot's messages in chat is a tool-use
// question.
func (e *policyEnv) asked(chat int64) bool {
	for _, m := range tgChat(e.srv, chat) {
		if strings.Contains(m.Visible, "claude wants to use") {
			return true
		}
	}
	return false
}

// TestModeAskIsTheOwners: on the default config (approvals off, no
// permission_modes) an allowed non-owner's /mode ask is refused; the tool
// claude denied in the default mode stays denied afterwards, with no
// question to answer — the finding of issue 33, where "/mode ask" then
// "yes" ran the command.
func TestModeAskIsTheOwners(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t, nil)
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	owned := filepath.Join(e.outside, "owned")
	e.fake.Enqueue(bash("id > "+owned), anthropictest.Reply{Text: "It was not allowed."})
	e.srv.PushText(chat, alice, "run id into a file")
	tgWaitMessage(t, e.srv, tgAlice, "It was not allowed.")
	if e.exists("owned") {
		t.Fatal("the command ran in the default mode")
	}

	e.srv.PushText(chat, alice, "/mode ask")
	tgWaitMessage(t, e.srv, tgAlice, "Only an owner can change the permission mode.")
	e.srv.PushText(chat, alice, "/mode")
	tgWaitMessage(t, e.srv, tgAlice, "Permission mode: default. The configuration offers no other")

	e.fake.Enqueue(bash("id > "+owned), anthropictest.Reply{Text: "Still not allowed."})
	e.srv.PushText(chat, alice, "run id into a file again")
	tgWaitMessage(t, e.srv, tgAlice, "Still not allowed.")
	e.srv.PushText(chat, alice, "yes")
	tgWaitMessage(t, e.srv, tgAlice, "echo: ", "yes")
	if e.exists("owned") || e.asked(tgAlice) {
		t.Fatal("the non-owner got an approval question or the command ran")
	}
}

// TestApprovalsAskTheOwner: with approvals = "chat" and the default
// approvers, a non-owner's tool use is asked about in the owner's own
// chat, and the non-owner's chat is told it waits for an owner; the
// non-owner's "yes" approves nothing (it is an ordinary message, answered
// after the turn); the owner's Allow does.
func TestApprovalsAskTheOwner(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t, Attrs{"approvals": "chat"})
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	target := filepath.Join(e.outside, "made")
	e.fake.Enqueue(bash("touch "+target), anthropictest.Reply{Text: "Made it."})
	e.srv.PushText(chat, alice, "make the file")
	q := tgWaitMessage(t, e.srv, tgOlga, "claude wants to use Bash:", "$ touch "+target, "Asked in a turn of Alice (tg:1001) in tg:1001.")
	tgWaitMessage(t, e.srv, tgAlice, "Waiting for an owner to approve Bash.")
	if e.asked(tgAlice) {
		t.Fatal("the question reached the non-owner's chat")
	}

	e.srv.PushText(chat, alice, "yes")
	allow := ""
	for _, row := range q.Keyboard {
		for _, b := range row {
			if b.Text == "Allow" {
				allow = b.Data
			}
		}
	}
	if allow == "" {
		t.Fatalf("no Allow under %+v", q.Keyboard)
	}
	if _, err := e.srv.PressButton(telegramtest.PrivateChat(tgOlga), q.MessageID, allow, tgUser(tgOlga, "Olga")); err != nil {
		t.Fatal(err)
	}
	tgWaitMessage(t, e.srv, tgAlice, "Made it.")
	tgWaitMessage(t, e.srv, tgOlga, "✅ Allowed by Olga.")
	tgWaitMessage(t, e.srv, tgAlice, "✅ Allowed by Olga.")
	if !e.exists("made") {
		t.Fatal("the owner's Allow did not run the command")
	}
	// Alice's "yes" was a message for claude, answered after the turn.
	tgWaitMessage(t, e.srv, tgAlice, "echo: ", "yes")
}

// TestApprovalsShowTheWholeCommand: a command padded with 1,200 spaces
// before "; touch …" is shown with its tail (the padding counted), and
// the whole command is attached as a file; the owner reads it and denies.
func TestApprovalsShowTheWholeCommand(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t, Attrs{"approvals": "chat"})
	chat, olga := telegramtest.PrivateChat(tgOlga), tgUser(tgOlga, "Olga")
	pwned := filepath.Join(e.outside, "pwned")
	command := "ls -la" + strings.Repeat(" ", 1200) + "; touch " + pwned
	e.fake.Enqueue(bash(command), anthropictest.Reply{Text: "Left alone."})
	e.srv.PushText(chat, olga, "list the files")
	q := tgWaitMessage(t, e.srv, tgOlga, "claude wants to use Bash:", "$ ls -la⟨1200 spaces⟩; touch "+pwned, "in the attached file command.sh")
	var file *telegramtest.UploadedFile
	for _, s := range e.srv.Sent() {
		if s.Method == "sendDocument" && s.ChatID == fmt.Sprint(tgOlga) && s.File != nil {
			file = s.File
		}
	}
	if file == nil || file.Filename != "command.sh" || string(file.Data) != command {
		t.Fatalf("attached %+v", file)
	}
	deny := ""
	for _, row := range q.Keyboard {
		for _, b := range row {
			if b.Text == "Deny" {
				deny = b.Data
			}
		}
	}
	if _, err := e.srv.PressButton(chat, q.MessageID, deny, olga); err != nil {
		t.Fatal(err)
	}
	tgWaitMessage(t, e.srv, tgOlga, "Left alone.")
	if e.exists("pwned") {
		t.Fatal("a denied command ran")
	}
}
