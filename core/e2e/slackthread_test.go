package e2e

import (
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
)

// TestSlackThreadAfterPluginRestart: the bot answered a mention in a
// thread of #general; after the plugin process is killed and restarted, a
// reply in that thread without a mention is still answered there (the
// plugin keeps the threads it answered in in its data directory).
func TestSlackThreadAfterPluginRestart(t *testing.T) {
	t.Parallel()
	e := startSlackDaemon(t)
	ts, _ := e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: "a thread starts here"})
	e.fake.Enqueue(anthropictest.Reply{Text: "Thread answer."})
	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: slMention("help in the thread"), ThreadTS: ts})
	e.waitMessage(t, e.general, ts, "Thread answer.")

	pid := slPluginPID(e.d, 0)
	if pid == 0 {
		t.Fatal("no clawhost-slack process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.connected(t, 2)
	e.fake.Enqueue(anthropictest.Reply{Text: "Still following the thread."})
	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, Text: "and one more thing", ThreadTS: ts})
	e.waitMessage(t, e.general, ts, "Still following the thread.")
}
