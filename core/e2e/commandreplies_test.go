package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestTelegramCommandReplies: a command plugin's replies reach Telegram as
// written (examples/ping's /report): the markdown reply's bold arrives as
// <b> in an HTML message, not as literal asterisks; its two replies are two
// messages; the file of the second goes as a document with that reply's
// text as its caption.
func TestTelegramCommandReplies(t *testing.T) {
	srv, _ := startPingHost(t)
	srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "/report")
	tgWaitMessage(t, srv, tgAlice, "The details are in the file.")
	tgSettle(t, srv, 300*time.Millisecond)

	var sent []telegramtest.Sent
	for _, s := range srv.Sent() {
		if s.ChatID == strconv.Itoa(tgAlice) {
			sent = append(sent, s)
		}
	}
	if len(sent) != 2 {
		t.Fatalf("%d messages, want one per reply: %+v", len(sent), sent)
	}
	first, second := sent[0], sent[1]
	if first.Method != "sendMessage" || first.ParseMode != "HTML" || !strings.Contains(first.Text, "<b>10</b>") || strings.Contains(first.Visible, "*") {
		t.Errorf("the markdown reply went as %s %s %q (visible %q), want HTML with <b>10</b>", first.Method, first.ParseMode, first.Text, first.Visible)
	}
	if second.Method != "sendDocument" || second.File == nil || !strings.Contains(string(second.File.Data), "10 passed") || !strings.Contains(second.Visible, "The details are in the file.") {
		t.Errorf("the reply with the file went as %s, caption %q, file %+v", second.Method, second.Visible, second.File)
	}
}

// TestCommandAnswerAcrossKill9: the host is SIGKILLed while the first
// message of /report's answer is in flight (the Bot API holds the call):
// after the restart the rest of the answer — the second message with its
// file — is sent once, and the first, whose fate is unknown, is not sent
// again; the chat is told a part may be missing. Before a command's
// answer went through the outbox, the restart sent nothing.
func TestCommandAnswerAcrossKill9(t *testing.T) {
	srv, d := startPingHost(t)
	srv.Fail("sendMessage", 1, telegramtest.Slow(10*time.Minute))
	srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "/report")
	sdktest.WaitFor(t, "the first message of the answer in flight", func() bool { return len(srv.Requests("sendMessage")) > 0 })
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	srv.ClearFailures()
	d.spawn()
	tgWaitMessage(t, srv, tgAlice, "The details are in the file.")
	tgWaitMessage(t, srv, tgAlice, "may be missing")
	tgSettle(t, srv, 500*time.Millisecond)
	if n := tgCount(srv, tgAlice, "The details are in the file."); n != 1 {
		t.Errorf("the second message %d times, want once", n)
	}
	if n := tgCount(srv, tgAlice, "Checks passed"); n != 0 {
		t.Errorf("the first message, in flight at the kill, was sent again (%d)", n)
	}
	docs := 0
	for _, s := range srv.Sent() {
		if s.ChatID == strconv.Itoa(tgAlice) && s.Method == "sendDocument" {
			docs++
		}
	}
	if docs != 1 {
		t.Errorf("%d documents, want the report once", docs)
	}
}

// startPingHost starts a host on the fake Telegram with examples/ping's
// commands, Alice allowed, and returns once /report is in the menu.
func startPingHost(t *testing.T) (*telegramtest.Server, *Daemon) {
	t.Helper()
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	d := Start(t, Host{
		Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Admin:   Attrs{"listen": "127.0.0.1:0"},
		Plugins: []Plugin{tgPlugin(srv.APIEndpoint()), {Name: "ping", Source: "ping"}},
	})
	sdktest.WaitFor(t, "the command menu with /report", func() bool {
		for _, c := range srv.Commands() {
			if c.Command == "report" {
				return true
			}
		}
		return false
	})
	return srv, d
}
