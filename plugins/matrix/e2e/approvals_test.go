package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/core/anthropictest"
	ce2e "github.com/clawhost/clawhost/core/e2e"
)

// TestMatrixApprovals: tool approvals without buttons. In #general the
// question about Bob's turn gets the bot's reactions to press; Bob's ✅
// does not count (only an owner approves), Alice's does. In the DM Alice
// denies by typing the number of Deny.
func TestMatrixApprovals(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	e := startMatrix(t, ce2e.Attrs{"approvals": "chat", "approval_timeout": "60s", "sandbox": "off"})
	touch := func(name string) anthropictest.Reply {
		return anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch " + filepath.Join(outside, name), "description": "create " + name}}}
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(outside, name)); return err == nil }

	e.fake.Enqueue(touch("allowed"), anthropictest.Reply{Text: "Created it."})
	ask := text("bot: please create the file")
	ask.Mentions = &event.Mentions{UserIDs: []id.UserID{e.bot.UserID}}
	send(t, e.bob, e.room, ask)
	q := e.waitBot(t, e.bw, e.room, "the question", contains("claude wants to use Bash:"))
	if c := q.Content.AsMessage(); !strings.Contains(c.Body, "✅ 1. Allow") || !strings.Contains(c.Body, "❌ 2. Deny") {
		t.Fatalf("the question does not list its answers: %q", c.Body)
	}
	react(t, e.bob, e.room, q.ID, "✅")
	e.waitBot(t, e.bw, e.room, "Bob told he may not answer", contains("Only an owner can answer this question."))
	if exists("allowed") {
		t.Fatal("Bob's reaction approved the command")
	}
	react(t, e.alice, e.room, q.ID, "✅")
	e.waitBot(t, e.bw, e.room, "the answer after the approval", contains("Created it."))
	if !exists("allowed") {
		t.Fatal("the approved command did not run")
	}

	// The DM: Alice types 2 (Deny).
	e.fake.Enqueue(touch("denied"), anthropictest.Reply{Text: "Understood, I left it alone."})
	send(t, e.alice, e.dm, text("please create another file"))
	e.waitBot(t, e.aw, e.dm, "the DM's question", contains("claude wants to use Bash:"))
	send(t, e.alice, e.dm, text("2"))
	e.waitBot(t, e.aw, e.dm, "the answer after the denial", contains("Understood, I left it alone."))
	if exists("denied") {
		t.Fatal("a denied command ran")
	}
}

func react(t *testing.T, cli *mautrix.Client, room id.RoomID, ev id.EventID, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.SendReaction(ctx, room, ev, key); err != nil {
		t.Fatal(err)
	}
}
