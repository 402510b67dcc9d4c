package e2e

// Tool approvals end to end: the real clawhost binary, the real
// clawhost-telegram plugin against the fake Bot API, and the real claude
// CLI against the fake Anthropic API, which makes the model call Bash on a
// file outside the workspace (a use claude asks permission for). The
// question reaches the chat with an inline keyboard; the test presses the
// buttons through the fake's callback queries.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
)

// TestApprovalsTelegramRealClaude: Deny through a callback query keeps the
// command from running and claude reads why; no answer within
// approval_timeout denies; "Always allow `touch …`" (the exact command)
// lets the same command run again without a question, not another one,
// and /new forgets it.
func TestApprovalsTelegramRealClaude(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	outside := t.TempDir() // not the workspace: claude asks before touching it
	// The real claude CLI with tool approvals from the chat; Alice
	// (tg:1001) is an owner, so the questions about her turns come to her
	// chat (approvers = "owners", the default).
	rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "60s", "approvals": "chat", "approval_timeout": "3s",
			"sandbox": "off", // the commands write outside the workspace, which the sandbox makes read-only
		}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}},
		Messages: Attrs{"streaming": "blocks"},
	})
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	touch := func(name string) anthropictest.Reply {
		return anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch " + filepath.Join(outside, name), "description": "create " + name}}}
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(outside, name)); return err == nil }
	// question waits for the question about name and returns it.
	question := func(name string) tgMessage {
		t.Helper()
		return tgWaitMessage(t, srv, tgAlice, "claude wants to use Bash:", "touch "+filepath.Join(outside, name))
	}
	press := func(m tgMessage, label string) {
		t.Helper()
		for _, row := range m.Keyboard {
			for _, b := range row {
				if strings.HasPrefix(b.Text, label) {
					if _, err := srv.PressButton(chat, m.MessageID, b.Data, alice); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
		}
		t.Fatalf("no button %q under %+v", label, m.Keyboard)
	}

	// Deny.
	fake.Enqueue(touch("denied"), anthropictest.Reply{Text: "Understood, I left it alone."})
	srv.PushText(chat, alice, "please create the file")
	q := question("denied")
	if len(q.Keyboard) != 2 || q.Keyboard[0][0].Text != "Allow" || q.Keyboard[0][1].Text != "Deny" || !strings.HasPrefix(q.Keyboard[1][0].Text, "Always allow `touch /") {
		t.Fatalf("keyboard %+v", q.Keyboard)
	}
	press(q, "Deny")
	tgWaitMessage(t, srv, tgAlice, "Understood, I left it alone.")
	tgWaitMessage(t, srv, tgAlice, "❌ Denied by Alice.")
	if exists("denied") {
		t.Fatal("a denied command ran")
	}
	if body := string(fake.Requests()[1].Body); !strings.Contains(body, "The user denied this tool use (Alice, from the chat)") {
		t.Error("claude did not read the denial")
	}
	if n := len(srv.Requests("answerCallbackQuery")); n != 1 {
		t.Errorf("%d callback answers, want 1", n)
	}

	// No answer: denied after approval_timeout.
	fake.Enqueue(touch("late"), anthropictest.Reply{Text: "Nobody said yes, so I did not."})
	srv.PushText(chat, alice, "create another")
	question("late")
	tgWaitMessage(t, srv, tgAlice, "⏱ No answer within 3 seconds — denied.")
	tgWaitMessage(t, srv, tgAlice, "Nobody said yes, so I did not.")
	if exists("late") {
		t.Fatal("an unanswered command ran")
	}

	// Always: the same command again is not asked about; another is.
	fake.Enqueue(touch("a"), touch("a"), touch("b"), anthropictest.Reply{Text: "All created."})
	srv.PushText(chat, alice, "create a, a again and b")
	press(question("a"), "Always allow `touch /")
	press(question("b"), "Allow")
	tgWaitMessage(t, srv, tgAlice, "All created.")
	if !exists("a") || !exists("b") {
		t.Fatal("allowed commands did not run")
	}
	asked := 0
	for _, m := range tgChat(srv, tgAlice) {
		if strings.Contains(m.Visible, "$ touch "+filepath.Join(outside, "a")) {
			asked++
		}
	}
	if asked != 1 {
		t.Fatalf("asked %d times about a, once before always", asked)
	}

	// /new forgets it: the next Bash call is asked about again.
	srv.PushText(chat, alice, "/new")
	tgWaitMessage(t, srv, tgAlice, "New session started.")
	fake.Enqueue(touch("c"), anthropictest.Reply{Text: "Created c."})
	srv.PushText(chat, alice, "create c")
	press(question("c"), "Allow")
	tgWaitMessage(t, srv, tgAlice, "Created c.")
	tgWaitMessage(t, srv, tgAlice, "✅ Allowed by Alice.")
	if !exists("c") {
		t.Fatal("an allowed command did not run")
	}
}

// TestApprovalsWebchatRealClaude: in headless Chromium the question shows
// Allow / Deny / Always buttons under it; pressing Allow runs the command,
// the question turns into who allowed it, and claude's reply follows.
func TestApprovalsWebchatRealClaude(t *testing.T) {
	t.Parallel()
	claude := clClaudeBin(t)
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	dir, outside := t.TempDir(), t.TempDir()
	// The web chat and the real claude CLI with tool approvals from the
	// chat. A browser's id is not known before it writes, so no owner can
	// be named: approvers = "sender" (on purpose: the test is about the web
	// chat's buttons).
	startWebchatIn(t, b, Host{
		Dir: dir,
		Agent: RealClaude(claude, filepath.Join(dir, "home"), fake.URL(), Attrs{
			"workspace": filepath.Join(dir, "workspace"), "timeout": "60s", "approvals": "chat", "approvers": "sender",
			"sandbox": "off", // the command writes outside the workspace, which the sandbox makes read-only
		}),
	})
	target := filepath.Join(outside, "allowed")
	fake.Enqueue(anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "touch " + target, "description": "create it"}}},
		anthropictest.Reply{Text: "Created it."})
	if err := b.Send("please create the file"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "claude wants to use Bash:"); err != nil {
		t.Fatal(err)
	}
	// The turn card's Stop may show above the question (the turn waits).
	if labels, err := b.Buttons(); err != nil || !strings.HasPrefix(strings.TrimPrefix(strings.Join(labels, "|"), "⏹ Stop|"), "Allow|Deny|Always allow `touch /") {
		t.Fatalf("buttons %q %v", labels, err)
	}
	if err := b.PressButton("Allow"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "Created it."); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "✅ Allowed by Web user."); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	if labels, _ := b.Buttons(); len(labels) != 0 {
		t.Errorf("buttons left after the answer: %q", labels)
	}
}

// TestApprovalOnTheCardTelegram: an owner's own turn whose tool use needs
// approval, with the turn card on (the default): the question and its
// Allow / Deny / Always buttons are on the card beside Stop, no message
// of its own; Allow pressed on the card runs the command, and the card
// becomes the answer.
func TestApprovalOnTheCardTelegram(t *testing.T) {
	t.Parallel()
	rig, outside := newTgClaude(t), t.TempDir()
	fake, srv := rig.fake, rig.srv
	rig.start(t, Host{
		Agent:  rig.agent(Attrs{"timeout": "60s", "approvals": "chat", "sandbox": "off"}),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}},
	})
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	target := filepath.Join(outside, "carded")
	fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "touch " + target, "description": "create it"}}},
		anthropictest.Reply{Text: "Created it."})
	srv.PushText(chat, alice, "please create the file")
	card := tgWaitMessage(t, srv, tgAlice, "⏸ Waiting for approval", "claude wants to use Bash:", "touch "+target)
	var labels []string
	allow := ""
	for _, row := range card.Keyboard {
		for _, b := range row {
			labels = append(labels, b.Text)
			if b.Text == "Allow" {
				allow = b.Data
			}
		}
	}
	if got := strings.Join(labels, "|"); !strings.HasPrefix(got, "Allow|Deny|Always allow `touch /") || !strings.HasSuffix(got, "|⏹ Stop") {
		t.Fatalf("the card's buttons %q", got)
	}
	if _, err := srv.PressButton(chat, card.MessageID, allow, alice); err != nil {
		t.Fatal(err)
	}
	answer := tgWaitMessage(t, srv, tgAlice, "Created it.")
	if answer.MessageID != card.MessageID || answer.Keyboard != nil {
		t.Errorf("the answer %+v did not replace the card %d (or kept its buttons)", answer.Sent, card.MessageID)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	for _, s := range srv.Sent() {
		if strings.Contains(s.Text, "claude wants to use") && s.MessageID != card.MessageID {
			t.Errorf("the question went out as a message of its own: %+v", s)
		}
	}
	if n := len(srv.Requests("answerCallbackQuery")); n != 1 {
		t.Errorf("%d callback answers, want 1", n)
	}
}
