package discord

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// approval is what the host puts under a tool-use question.
var approval = [][]channel.Button{
	{{ID: "ap:0123456789ab:y", Label: "Allow"}, {ID: "ap:0123456789ab:n", Label: "Deny"}},
	{{ID: "ap:0123456789ab:a", Label: "Always allow Bash here"}},
}

// wantRows is approval as the fake keeps it.
var wantRows = []discordtest.ActionRow{
	{Type: 1, Components: []discordtest.Component{{Type: 2, Style: 2, Label: "Allow", CustomID: "ap:0123456789ab:y"}, {Type: 2, Style: 2, Label: "Deny", CustomID: "ap:0123456789ab:n"}}},
	{Type: 1, Components: []discordtest.Component{{Type: 2, Style: 2, Label: "Always allow Bash here", CustomID: "ap:0123456789ab:a"}}},
}

func sameRows(got, want []discordtest.ActionRow) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Type != want[i].Type || len(got[i].Components) != len(want[i].Components) {
			return false
		}
		for j := range got[i].Components {
			if got[i].Components[j] != want[i].Components[j] {
				return false
			}
		}
	}
	return true
}

// ctxWait is a context bounded by testWait.
func ctxWait(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	return ctx
}

// TestSendButtons: buttons become action rows of secondary buttons under
// the one message a Send posts — in a channel, a DM, a thread, with a
// file, and through a slash command's webhook (its answer and follow-ups);
// a Send without buttons sends none.
func TestSendButtons(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	dm := srv.AddDM(alice)
	thread := srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelPublicThread, GuildID: guildID, Name: "t", ParentID: general.ID})
	slash := guildChannel(srv, "slash")
	a := newAdapter(t, srv, "", nil)
	if !a.Capabilities().Buttons {
		t.Fatal("capability buttons not declared")
	}
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	srv.PushCommand(slash, bob, "mode", "")
	inbox.Wait(t, 1)
	file := filepath.Join(t.TempDir(), "plan.txt")
	if err := os.WriteFile(file, []byte("the plan"), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		req  channel.SendRequest
		// method and to are where the message is wanted.
		method, to string
	}{
		{"channel", channel.SendRequest{ChatID: general.ID, Text: "claude wants to use Bash"}, "create", general.ID},
		{"dm", channel.SendRequest{ChatID: dm.ID, Text: "claude wants to use Bash"}, "create", dm.ID},
		{"thread", channel.SendRequest{ChatID: general.ID, ThreadID: thread.ID, Text: "claude wants to use Bash"}, "create", thread.ID},
		{"file", channel.SendRequest{ChatID: general.ID, Text: "run this?", Media: []channel.OutboundMedia{{Path: file, Kind: channel.MediaDocument}}}, "create", general.ID},
		{"slash answer", channel.SendRequest{ChatID: slash.ID, Text: "pick a mode"}, "original", slash.ID},
		{"slash follow-up", channel.SendRequest{ChatID: slash.ID, Text: "pick again"}, "followup", slash.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(srv.Sent())
			req := c.req
			req.Format, req.Buttons = channel.FormatMarkdown, approval
			res, err := a.Send(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			sent := srv.Sent()[n:]
			if len(sent) != 1 || len(res.MessageIDs) != 1 || sent[0].MessageID != res.MessageIDs[0] {
				t.Fatalf("sent %+v as %v, want one message", sent, res.MessageIDs)
			}
			if s := sent[0]; s.Method != c.method || s.ChannelID != c.to || s.Content != req.Text || !sameRows(s.Components, wantRows) {
				t.Errorf("sent %s to %s %q with %+v; want %s to %s with the buttons", s.Method, s.ChannelID, s.Content, s.Components, c.method, c.to)
			}
			if m, _ := srv.Message(res.MessageIDs[0]); !sameRows(m.Components, wantRows) {
				t.Errorf("message has %+v", m.Components)
			}
		})
	}
	res, err := a.Send(context.Background(), channel.SendRequest{ChatID: general.ID, Text: "no buttons", Format: channel.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(res.MessageIDs[0]); len(m.Components) != 0 {
		t.Errorf("a send without buttons has %+v", m.Components)
	}
}

// TestSendButtonsRefused: what Discord would refuse is refused as
// invalid_request before any request; its limits themselves are sent.
func TestSendButtonsRefused(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", nil)
	b := func(id string) channel.Button { return channel.Button{ID: id, Label: "x"} }
	cases := []struct {
		name string
		rows [][]channel.Button
		ok   bool
	}{
		{name: "five by five", ok: true, rows: [][]channel.Button{
			{b("11"), b("12"), b("13"), b("14"), b("15")}, {b("21"), b("22"), b("23"), b("24"), b("25")}, {b("31"), b("32"), b("33"), b("34"), b("35")},
			{b("41"), b("42"), b("43"), b("44"), b("45")}, {b("51"), b("52"), b("53"), b("54"), b("55")}}},
		{name: "limits", ok: true, rows: [][]channel.Button{{{ID: strings.Repeat("i", 100), Label: strings.Repeat("é", 80)}}}},
		{name: "six rows", rows: [][]channel.Button{{b("1")}, {b("2")}, {b("3")}, {b("4")}, {b("5")}, {b("6")}}},
		{name: "six in a row", rows: [][]channel.Button{{b("1"), b("2"), b("3"), b("4"), b("5"), b("6")}}},
		{name: "id of 101", rows: [][]channel.Button{{{ID: strings.Repeat("i", 101), Label: "x"}}}},
		{name: "no id", rows: [][]channel.Button{{{ID: "", Label: "x"}}}},
		{name: "same id twice", rows: [][]channel.Button{{b("y")}, {b("y")}}},
		{name: "blank label", rows: [][]channel.Button{{{ID: "x", Label: " "}}}},
		{name: "label of 81", rows: [][]channel.Button{{{ID: "x", Label: strings.Repeat("é", 81)}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(srv.Requests(discordtest.RouteCreate))
			_, err := a.Send(context.Background(), channel.SendRequest{ChatID: general.ID, Text: "t", Format: channel.FormatMarkdown, Buttons: c.rows})
			reqs := len(srv.Requests(discordtest.RouteCreate)) - n
			if c.ok {
				if err != nil || reqs != 1 {
					t.Fatalf("err %v after %d requests, want it sent", err, reqs)
				}
				return
			}
			if channel.CodeOf(err) != channel.CodeInvalidRequest || reqs != 0 {
				t.Errorf("err %v after %d requests, want invalid_request before any", err, reqs)
			}
		})
	}
}

// TestEditRemovesButtons: an edit clears the buttons (components: []) of
// a channel message and of a slash command's answer and follow-up.
func TestEditRemovesButtons(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	slash := guildChannel(srv, "slash")
	a := newAdapter(t, srv, "", nil)
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	ctx := context.Background()
	send := func(chat string) string {
		t.Helper()
		res, err := a.Send(ctx, channel.SendRequest{ChatID: chat, Text: "question", Format: channel.FormatMarkdown, Buttons: approval})
		if err != nil {
			t.Fatal(err)
		}
		return res.MessageIDs[0]
	}
	inChannel := send(general.ID)
	srv.PushCommand(slash, bob, "mode", "")
	inbox.Wait(t, 1)
	answer, followup := send(slash.ID), send(slash.ID)
	for _, id := range []struct{ chat, msg string }{{general.ID, inChannel}, {slash.ID, answer}, {slash.ID, followup}} {
		if err := a.Edit(ctx, channel.EditRequest{ChatID: id.chat, MessageID: id.msg, Text: "❌ Denied by bob.", Format: channel.FormatMarkdown}); err != nil {
			t.Fatal(err)
		}
		m, _ := srv.Message(id.msg)
		if len(m.Components) != 0 || m.Content != "❌ Denied by bob." {
			t.Errorf("after the edit of %s: %q %+v", id.msg, m.Content, m.Components)
		}
		if _, err := srv.PressButton(id.msg, "ap:0123456789ab:y", bob); err == nil {
			t.Errorf("a removed button of %s could be pressed", id.msg)
		}
	}
	var methods []string
	for _, s := range srv.Sent() {
		methods = append(methods, s.Method)
	}
	if got := strings.Join(methods, " "); got != "create original followup edit original edit" {
		t.Errorf("calls %q", got)
	}
}

// TestPress: a press is delivered as an action — its unique id, the
// button's label, the presser, the chat as for a message there — and a
// bot's press is not.
func TestPress(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	dm := srv.AddDM(alice)
	thread := srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelPublicThread, GuildID: guildID, Name: "ideas", ParentID: general.ID, OwnerID: alice.ID})
	a := newAdapter(t, srv, "", nil)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a.now = func() time.Time { return at }
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	cases := []struct {
		name     string
		chat     string // where the question is
		thread   string
		presser  discordtest.User
		button   string
		want     *channel.InboundMessage // nil: not delivered
		wantText string
	}{
		{name: "dm", chat: dm.ID, presser: alice, button: "ap:0123456789ab:y",
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: dm.ID, Sender: channel.Sender{ID: alice.ID, Name: "Alice", Username: "alice"}, Text: "Allow", WasMentioned: true}},
		{name: "server", chat: general.ID, presser: bob, button: "ap:0123456789ab:n",
			want: &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ChatTitle: "general", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"}, Text: "Deny", WasMentioned: true}},
		{name: "thread", chat: general.ID, thread: thread.ID, presser: bob, button: "ap:0123456789ab:a",
			want: &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ThreadID: thread.ID, ChatTitle: "general › ideas", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"}, Text: "Always allow Bash here", WasMentioned: true}},
		{name: "bot", chat: general.ID, presser: other, button: "ap:0123456789ab:y"},
	}
	got := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := a.Send(context.Background(), channel.SendRequest{ChatID: c.chat, ThreadID: c.thread, Text: "may claude?", Format: channel.FormatMarkdown, Buttons: approval})
			if err != nil {
				t.Fatal(err)
			}
			ix, err := srv.PressButton(res.MessageIDs[0], c.button, c.presser)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "marker " + c.name})
				got++
				if last := inbox.Wait(t, got)[got-1]; last.Text != "marker "+c.name {
					t.Fatalf("delivered %+v, want nothing before the marker", last)
				}
				return
			}
			got++
			in := inbox.Wait(t, got)[got-1]
			want := *c.want
			want.MessageID = "ix:" + ix.ID
			if diff := compare(in, want); diff != "" {
				t.Errorf("got %s", diff)
			}
			if in.Action == nil || *in.Action != (channel.Action{ButtonID: c.button, MessageID: res.MessageIDs[0]}) {
				t.Errorf("action %+v", in.Action)
			}
			if !in.Timestamp.Equal(at) {
				t.Errorf("timestamp %v, want the time of receipt %v", in.Timestamp, at)
			}
		})
	}
}

// waitPending waits until the state holds a message for the host whose
// text is text.
func waitPending(t *testing.T, a *testAdapter, text string) {
	t.Helper()
	deadline := time.After(testWait)
	for {
		msgs, more := a.state.pending()
		for _, m := range msgs {
			if m.Text == text {
				return
			}
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("timed out waiting for %q to be pending", text)
		}
	}
}

// heldInbox holds the first Deliver until release is closed (or its ctx
// ends), telling entered what it holds.
func heldInbox() (inbox *sdktest.Inbox, entered chan []channel.InboundMessage, release chan struct{}) {
	inbox = &sdktest.Inbox{}
	entered = make(chan []channel.InboundMessage, 1)
	release = make(chan struct{})
	inbox.Decide = func(ctx context.Context, call int, msgs []channel.InboundMessage) error {
		if call != 1 {
			return nil
		}
		entered <- msgs
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return inbox, entered, release
}

func held(t *testing.T, entered chan []channel.InboundMessage) []channel.InboundMessage {
	t.Helper()
	select {
	case msgs := <-entered:
		return msgs
	case <-time.After(testWait):
		t.Fatal("timed out waiting for a delivery")
		return nil
	}
}

// sendQuestion posts the approval buttons in dm and returns the message id.
func sendQuestion(t *testing.T, a *testAdapter, chat string) string {
	t.Helper()
	res, err := a.Send(context.Background(), channel.SendRequest{ChatID: chat, Text: "may claude?", Format: channel.FormatMarkdown, Buttons: approval})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageIDs[0]
}

// pressApproval sends the approval question to chat and has alice press
// button on it.
func pressApproval(t *testing.T, a *testAdapter, chat, button string) discordtest.Interaction {
	t.Helper()
	ix, err := a.srv.PressButton(sendQuestion(t, a, chat), button, alice)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// answeredOnce checks that the plugin answered Discord one interaction
// callback in all.
func answeredOnce(t *testing.T, srv *discordtest.Server) {
	t.Helper()
	if n := len(srv.Requests(discordtest.RouteCallback)); n != 1 {
		t.Errorf("%d answers, want 1", n)
	}
}

// TestPressAcknowledgedAfterDelivery: the press is acknowledged once, with
// a deferred update (6), only after the host stored it — not when the
// plugin saved it, nor before.
func TestPressAcknowledgedAfterDelivery(t *testing.T) {
	srv, dm, a := aliceDM(t)
	a.ackWait = time.Hour // the deadline must not answer first
	inbox, entered, release := heldInbox()
	stop := a.runLive(t, inbox)
	ix := pressApproval(t, a, dm.ID, "ap:0123456789ab:y")
	if msgs := held(t, entered); len(msgs) != 1 || msgs[0].MessageID != "ix:"+ix.ID {
		t.Fatalf("delivering %+v", msgs)
	}
	// The dispatch that saved the press has moved on to a later message:
	// whatever it would do about the press, it has done.
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "later"})
	waitPending(t, a, "later")
	if n := len(srv.Requests(discordtest.RouteCallback)); n != 0 {
		t.Fatalf("%d answers before the host stored the press", n)
	}
	close(release)
	cb, err := srv.WaitCallbacks(ctxWait(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if cb[0].Interaction != ix.ID || cb[0].Type != discordtest.CallbackDeferredUpdate {
		t.Errorf("callback %+v, want a deferred update (6) of %s", cb[0], ix.ID)
	}
	inbox.Wait(t, 2)
	stop()
	answeredOnce(t, srv)
	if logs := a.logs.String(); strings.Contains(logs, "could not acknowledge") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestPressSlowDelivery: a host that has not stored the press by the
// deadline does not make Discord fail it: the press is acknowledged then,
// and delivered when the host takes it, without a second answer.
func TestPressSlowDelivery(t *testing.T) {
	srv, dm, a := aliceDM(t)
	a.ackWait = 50 * time.Millisecond
	inbox, entered, release := heldInbox()
	stop := a.runLive(t, inbox)
	question := sendQuestion(t, a, dm.ID)
	pressed := time.Now()
	ix, err := srv.PressButton(question, "ap:0123456789ab:n", alice)
	if err != nil {
		t.Fatal(err)
	}
	held(t, entered)
	cb, err := srv.WaitCallbacks(ctxWait(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if cb[0].Interaction != ix.ID || cb[0].Type != discordtest.CallbackDeferredUpdate || cb[0].Time.Sub(pressed) < a.ackWait {
		t.Errorf("callback %+v %v after the press, want a deferred update of %s after %v", cb[0], cb[0].Time.Sub(pressed), ix.ID, a.ackWait)
	}
	if n := len(inbox.Stored()); n != 0 {
		t.Fatalf("the host has %d messages; the test holds the delivery", n)
	}
	close(release)
	in := inbox.Wait(t, 1)[0]
	if in.MessageID != "ix:"+ix.ID || in.Action == nil || in.Action.ButtonID != "ap:0123456789ab:n" || in.Text != "Deny" {
		t.Errorf("delivered %+v", in)
	}
	stop()
	answeredOnce(t, srv)
}

// TestPressAcknowledgedAtStop: a press the host has not stored when the
// plugin stops is acknowledged then, and delivered from the state file
// after the restart without another answer.
func TestPressAcknowledgedAtStop(t *testing.T) {
	srv, dm, a := aliceDM(t)
	a.ackWait = time.Hour
	inbox, entered, _ := heldInbox()
	stop := a.runLive(t, inbox)
	ix := pressApproval(t, a, dm.ID, "ap:0123456789ab:y")
	held(t, entered)
	stop()
	if cb := srv.Callbacks(); len(cb) != 1 || cb[0].Interaction != ix.ID {
		t.Fatalf("callbacks after stop %+v, want the press answered", cb)
	}

	b := newAdapter(t, srv, a.dir, nil)
	inbox2 := &sdktest.Inbox{}
	stop2 := b.run(t, inbox2)
	if in := inbox2.Wait(t, 1)[0]; in.MessageID != "ix:"+ix.ID || in.Action == nil {
		t.Errorf("after the restart %+v", in)
	}
	stop2()
	answeredOnce(t, srv)
}

// TestPressAckFails: a failed acknowledgement is logged as a warning,
// without the interaction's token; the press counts all the same.
func TestPressAckFails(t *testing.T) {
	srv, dm, a := aliceDM(t)
	inbox := &sdktest.Inbox{}
	stop := a.runLive(t, inbox)
	srv.Fail(discordtest.RouteCallback, 1, discordtest.Failure{Status: 500, Message: "500: Internal Server Error"})
	ix := pressApproval(t, a, dm.ID, "ap:0123456789ab:y")
	if in := inbox.Wait(t, 1)[0]; in.MessageID != "ix:"+ix.ID {
		t.Errorf("delivered %+v", in)
	}
	stop()
	logs := a.logs.String()
	if !strings.Contains(logs, `level=WARN msg="could not acknowledge a button press"`) {
		t.Errorf("no warning in the log:\n%s", logs)
	}
	if strings.Contains(logs, ix.Token) || strings.Contains(logs, testToken) {
		t.Errorf("a token in the log:\n%s", logs)
	}
}

// TestMapErrFormAndTransport: only a too-long content is message_too_long
// (a button's label over the limit is invalid_request), and transport
// errors do not carry the URL, whose webhook path holds a token.
func TestMapErrFormAndTransport(t *testing.T) {
	t.Parallel()
	form := func(body string) error {
		return &discordgo.RESTError{Response: &http.Response{StatusCode: 400, Status: "400 Bad Request"}, ResponseBody: []byte(body),
			Message: &discordgo.APIErrorMessage{Code: 50035, Message: "Invalid Form Body"}}
	}
	cases := []struct {
		name string
		err  error
		code channel.Code
	}{
		{"content", form(`{"code":50035,"errors":{"content":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH"}]}}}`), channel.CodeMessageTooLong},
		{"label", form(`{"code":50035,"errors":{"components":{"0":{"components":{"0":{"label":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH"}]}}}}}}}`), channel.CodeInvalidRequest},
		{"transport", &url.Error{Op: "Post", URL: "https://discord.com/api/v9/webhooks/1/SECRET-TOKEN", Err: errors.New("connection reset by peer")}, channel.CodeUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := mapErr(c.err)
			if channel.CodeOf(err) != c.code || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("%v, want code %s and no token", err, c.code)
			}
		})
	}
}

// TestEditKeepsButtons: an edit with buttons keeps them under the message
// (a turn card's Stop button across its updates), and pressing one still
// arrives; the next edit without buttons removes them.
func TestEditKeepsButtons(t *testing.T) {
	srv, general, a, inbox := liveInGeneral(t)
	ctx := context.Background()
	stop := [][]channel.Button{{{ID: "/stop", Label: "⏹ Stop"}}}
	res, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "⏳ Working · 0s", Format: channel.FormatPlain, Buttons: stop})
	if err != nil {
		t.Fatal(err)
	}
	id := res.MessageIDs[0]
	if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: id, Text: "⏳ Working · 5s", Format: channel.FormatPlain, Buttons: stop}); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(id); len(m.Components) != 1 || m.Content != "⏳ Working · 5s" {
		t.Fatalf("after an edit with buttons: %q %+v", m.Content, m.Components)
	}
	if _, err := srv.PressButton(id, "/stop", bob); err != nil {
		t.Fatalf("the kept button: %v", err)
	}
	inbox.Wait(t, 1)
	if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: id, Text: "The answer.", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(id); len(m.Components) != 0 || m.Content != "The answer." {
		t.Fatalf("after the final edit: %q %+v", m.Content, m.Components)
	}
}

// TestReact: the bot's reaction goes on a message of a channel and of a
// thread (its own channel), and comes off again; one without an emoji is
// refused before any request.
func TestReact(t *testing.T) {
	srv, general, a, _ := liveInGeneral(t)
	ctx := context.Background()
	m := srv.Push(discordtest.Message{ChannelID: general.ID, Author: bob, Content: "look"})
	if err := a.React(ctx, channel.ReactRequest{ChatID: general.ID, MessageID: m.ID, Emoji: "👀"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reactions(m.ID); len(got) != 1 || got[0] != "👀" {
		t.Fatalf("reactions %q", got)
	}
	if err := a.React(ctx, channel.ReactRequest{ChatID: general.ID, MessageID: m.ID, Emoji: "👀", Remove: true}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reactions(m.ID); len(got) != 0 {
		t.Fatalf("after the removal %q", got)
	}
	n := len(srv.Requests(""))
	if err := a.React(ctx, channel.ReactRequest{ChatID: general.ID, MessageID: m.ID}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("no emoji: %v", err)
	}
	if len(srv.Requests("")) != n {
		t.Error("a refused reaction reached Discord")
	}
}
