package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
)

// TestSlackOwnerApprovesFromDM: Bob's turn in #general wants a tool; the
// question goes to the owner Alice by her user id (U…), the fake Slack
// shows it in her DM (D…), and her Allow pressed there — reported in
// D… — runs the command.
func TestSlackOwnerApprovesFromDM(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	e := startSlackDaemon(t, chatApprovals("2m"))
	target := filepath.Join(outside, "allowed")
	e.fake.Enqueue(anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash",
		Input: map[string]any{"command": "touch " + target, "description": "create a file"}}},
		anthropictest.Reply{Text: "Created it."})
	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: slMention("please create the file")})
	e.waitMessage(t, e.general, "", "Waiting for an owner to approve Bash.")
	q := e.waitMessage(t, e.dm, "", "claude wants to use Bash", "touch "+target)
	if _, err := e.srv.Press(slAlice.ID, e.dm, q.TS, slButton(t, q, "Allow")); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.general, "", "Created it.")
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	e.waitMessage(t, e.dm, "", "Allowed by")
	if n := e.count(e.dm, "Only an owner can answer"); n != 0 {
		t.Errorf("the owner's press was refused %d times", n)
	}
}
