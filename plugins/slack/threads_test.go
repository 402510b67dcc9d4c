package slack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// TestThreadsAfterRestart: a reply without a mention in a thread the bot
// answered in is addressed to it after the plugin restarted (a new
// adapter on the same data directory), as before; one in a thread the
// bot never posted in is not.
func TestThreadsAfterRestart(t *testing.T) {
	t.Parallel()
	srv, general := bobInGeneral(t)
	dir := t.TempDir()
	first := newAdapterIn(t, srv, dir, nil)
	inbox := &sdktest.Inbox{}
	stop := first.run(t, inbox)
	waitState(t, first.reports, status.Ready)
	answered, _ := srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: mention(slacktest.BotUserID) + " start a thread"})
	other, _ := srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: "a thread of people"})
	waitHaving(t, inbox, "start a thread")
	if _, err := first.Send(context.Background(), channel.SendRequest{ChatID: general.ID, ThreadID: answered, Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	stop()

	second := newAdapterIn(t, srv, dir, nil)
	inbox = &sdktest.Inbox{}
	second.run(t, inbox)
	waitState(t, second.reports, status.Ready)
	srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: "follow-up", ThreadTS: answered})
	srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: "people talking", ThreadTS: other})
	if m := waitHaving(t, inbox, "follow-up"); !m.WasMentioned || m.ThreadID != answered {
		t.Errorf("follow-up in the bot's thread after a restart: %+v", m)
	}
	if m := waitHaving(t, inbox, "people talking"); m.WasMentioned {
		t.Errorf("a reply in a thread the bot never posted in counts as a mention: %+v", m)
	}
}

// waitHaving waits for the first delivered message whose text has s.
func waitHaving(t *testing.T, inbox *sdktest.Inbox, s string) channel.InboundMessage {
	t.Helper()
	var found channel.InboundMessage
	sdktest.WaitFor(t, "a message with "+s, func() bool {
		for _, m := range inbox.Stored() {
			if strings.Contains(m.Text, s) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// TestThreadsBounded: the newest maxThreads threads are kept, in memory
// and in the file, which never holds more than twice as many lines; a
// torn last line is dropped when read.
func TestThreadsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var th threads
	if err := th.open(dir); err != nil {
		t.Fatal(err)
	}
	const n = 2*maxThreads + 100
	for i := range n {
		if err := th.note("C1", fmt.Sprintf("%d.000100", i)); err != nil {
			t.Fatal(err)
		}
		if err := th.note("C1", fmt.Sprintf("%d.000100", i)); err != nil { // again: nothing new
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, threadsFile)
	lines := func() int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	if l := lines(); l > 2*maxThreads || l < maxThreads {
		t.Errorf("the file holds %d lines, want %d to %d", l, maxThreads, 2*maxThreads)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("C1 torn"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var again threads
	if err := again.open(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ts   string
		kept bool
	}{
		{fmt.Sprintf("%d.000100", n-1), true},
		{fmt.Sprintf("%d.000100", n-maxThreads), true},
		{fmt.Sprintf("%d.000100", n-maxThreads-1), false},
		{"0.000100", false},
		{"torn", false},
	} {
		if got := again.has("C1", c.ts); got != c.kept {
			t.Errorf("thread %s kept: %v, want %v", c.ts, got, c.kept)
		}
	}
	if l := lines(); l != maxThreads {
		t.Errorf("after reading, the file holds %d lines, want %d", l, maxThreads)
	}
}
