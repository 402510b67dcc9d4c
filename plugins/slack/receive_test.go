package slack

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// TestReceive: a DM, a channel mention (the message event and the
// app_mention event map to one MessageID), a thread reply, a channel
// message without a mention, the bot's own and another bot's messages;
// each envelope is acknowledged once the host stored what it carries.
func TestReceive(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dm := srv.AddDM(alice)
	srv.AddUser(bob)
	general := srv.AddChannel(slacktest.Channel{Name: "general"})
	a := newAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	a.run(t, inbox)
	waitFake(t, srv, "a connection", func() bool { return srv.Connected() >= 1 })
	waitState(t, a.reports, status.Ready)

	_, envs := srv.Post(slacktest.Message{Channel: dm.ID, User: alice.ID, Text: "hello &lt;world&gt;"})
	got := inbox.Wait(t, 1)[0]
	if got.ChatType != channel.ChatDirect || got.ChatID != dm.ID || got.Sender.ID != alice.ID || got.Sender.Name != "Alice" || got.Text != "hello <world>" {
		t.Errorf("dm: %+v", got)
	}
	waitFake(t, srv, "the dm acked", func() bool { return srv.Acked(envs[0]) })

	ts, envs := srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: mention(slacktest.BotUserID) + " what is <https://go.dev|Go>?"})
	if len(envs) != 2 {
		t.Fatalf("a mention is two events on slack: %v", envs)
	}
	msgs := inbox.Wait(t, 3)
	for _, m := range msgs[1:] {
		if m.ChatType != channel.ChatGroup || m.ChatID != general.ID || m.MessageID != ts || !m.WasMentioned ||
			m.Text != "@clawbot what is Go (https://go.dev)?" || m.CommandText != "what is Go (https://go.dev)?" || m.ChatTitle != "#general" {
			t.Errorf("mention: %+v", m)
		}
	}

	srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: "in the thread", ThreadTS: ts})
	m := inbox.Wait(t, 4)[3]
	if m.ThreadID != ts || m.WasMentioned {
		t.Errorf("thread reply: %+v", m)
	}
	srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: "just chatting"})
	m = inbox.Wait(t, 5)[4]
	if m.WasMentioned || m.ThreadID != "" {
		t.Errorf("plain channel message: %+v", m)
	}
	// Neither the bot's own nor another bot's message reaches the host.
	own := srv.Event(map[string]any{"type": "message", "user": slacktest.BotUserID, "text": "mine", "ts": "1.1", "channel": general.ID})
	other := srv.Event(map[string]any{"type": "message", "subtype": "bot_message", "bot_id": "B2", "text": "beep", "ts": "1.2", "channel": general.ID})
	edit := srv.Event(map[string]any{"type": "message", "subtype": "message_changed", "ts": "1.3", "channel": general.ID})
	waitFake(t, srv, "the skipped events acked", func() bool { return srv.Acked(own) && srv.Acked(other) && srv.Acked(edit) })
	if n := len(inbox.Stored()); n != 5 {
		t.Errorf("%d messages stored, want 5: %+v", n, inbox.Stored()[5:])
	}
}

// TestReplyInThread: with reply_in_thread a top-level mention is the
// start of a thread of its own; after the bot answered in a thread,
// replies there count as addressed to it.
func TestReplyInThread(t *testing.T) {
	t.Parallel()
	srv, general := bobInGeneral(t)
	a := newAdapter(t, srv, map[string]any{"reply_in_thread": true})
	inbox := &sdktest.Inbox{}
	a.runReady(t, inbox)
	ts, _ := srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: mention(slacktest.BotUserID) + " hi"})
	m := inbox.Wait(t, 1)[0]
	if m.ThreadID != ts {
		t.Fatalf("thread: %+v", m)
	}
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: general.ID, ThreadID: ts, Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.BotMessages(general.ID, ts); len(got) != 1 || got[0].Text != "answer" {
		t.Fatalf("the answer is not in the thread: %+v", srv.Messages(general.ID))
	}
	srv.Post(slacktest.Message{Channel: general.ID, User: bob.ID, Text: "follow-up", ThreadTS: ts})
	// The mention came as a message and an app_mention event (the host
	// keeps one by MessageID): wait for the follow-up by its text.
	last := waitText(t, inbox, "follow-up")
	if !last.WasMentioned || last.ThreadID != ts {
		t.Errorf("follow-up in the bot's thread: %+v", last)
	}
}

// waitText waits for the first delivered message with this text.
func waitText(t *testing.T, inbox *sdktest.Inbox, text string) channel.InboundMessage {
	t.Helper()
	for n := 1; ; n++ {
		msgs := inbox.Wait(t, n)
		for _, m := range msgs {
			if m.Text == text {
				return m
			}
		}
		n = len(msgs)
	}
}

// TestUnackedIsSentAgain: an envelope whose message the host did not
// store is not acknowledged; Slack sends it again on the next connection
// (a disconnect envelope: refresh_requested) and it is delivered then.
// Nothing is lost across the reconnect.
func TestUnackedIsSentAgain(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dm := srv.AddDM(alice)
	a := newAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	inbox.Decide = func(ctx context.Context, call int, msgs []channel.InboundMessage) error {
		if call == 1 {
			return errors.New("journal locked")
		}
		return nil
	}
	a.run(t, inbox)
	waitFake(t, srv, "a connection", func() bool { return srv.Connected() >= 1 })
	_, envs := srv.Post(slacktest.Message{Channel: dm.ID, User: alice.ID, Text: "first"})
	inbox.WaitCalls(t, 1)
	if srv.Acked(envs[0]) {
		t.Fatal("an envelope the host did not store was acknowledged")
	}
	if err := srv.Disconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	waitFake(t, srv, "a second connection", func() bool { return srv.Connected() >= 2 })
	srv.Post(slacktest.Message{Channel: dm.ID, User: alice.ID, Text: "second"})
	msgs := inbox.Wait(t, 2)
	if msgs[0].Text != "first" || msgs[1].Text != "second" {
		t.Errorf("after the reconnect: %v", msgs)
	}
	waitFake(t, srv, "both acked", func() bool { return srv.Unacked() == 0 })
	if n := srv.Attempts(envs[0]); n != 2 {
		t.Errorf("the first envelope was sent %d times, want 2", n)
	}
}

// TestInvalidAuth: a rejected token is needs_attention with what to do,
// and Retry tries again (here with the token still bad: a second auth.test).
func TestInvalidAuth(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.RevokeBotToken()
	a := newAdapter(t, srv, nil)
	a.run(t, &sdktest.Inbox{})
	st := waitState(t, a.reports, status.NeedsAttention)
	if st.Attention == nil || st.Attention.Retry == "" || !contains(st.Message, "invalid_auth") || !contains(st.Message, "bot_token") {
		t.Errorf("status: %+v", st)
	}
	n := len(srv.Requests("auth.test"))
	if err := a.Retry(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFake(t, srv, "another auth.test", func() bool { return len(srv.Requests("auth.test")) > n })
}

// TestMissingScopeOnConnect: an app token without connections:write
// (apps.connections.open answers missing_scope) names the scope.
func TestMissingScopeOnConnect(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("apps.connections.open", 1, slacktest.Failure{Error: "missing_scope"})
	a := newAdapter(t, srv, nil)
	a.run(t, &sdktest.Inbox{})
	st := waitState(t, a.reports, status.NeedsAttention)
	if !contains(st.Message, "missing_scope") {
		t.Errorf("status: %+v", st)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
