package slack

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// TestSendMrkdwn: markdown goes out as mrkdwn, plain text escaped so it
// shows as written (no mention pings), in the thread asked for.
func TestSendMrkdwn(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	general := srv.AddChannel(slacktest.Channel{Name: "general"})
	a := newAdapter(t, srv, nil)
	ctx := context.Background()
	const md = "**hi** <@U1> [docs](https://e.com)"
	r, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: md, Format: channel.FormatMarkdown, Rendered: markup.RenderFor(md, channel.MarkupMrkdwn)})
	if err != nil || len(r.MessageIDs) != 1 {
		t.Fatalf("send: %v %v", r, err)
	}
	if got := srv.BotMessages(general.ID, ""); len(got) != 1 || got[0].Text != "*hi* &lt;@U1&gt; <https://e.com|docs>" || got[0].TS != r.MessageIDs[0] {
		t.Errorf("markdown: %+v", got)
	}
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "a <!channel> & b", Format: channel.FormatPlain, ThreadID: r.MessageIDs[0]}); err != nil {
		t.Fatal(err)
	}
	if got := srv.BotMessages(general.ID, r.MessageIDs[0]); len(got) != 1 || got[0].Text != "a &lt;!channel&gt; &amp; b" {
		t.Errorf("plain in thread: %+v", got)
	}
}

// TestSendErrors: the limit (refused before any request), an unknown
// chat, a channel the bot is not in, a 429 with its Retry-After, a lost
// answer after the request was written is uncertain.
func TestSendErrors(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	general := srv.AddChannel(slacktest.Channel{Name: "general"})
	outside := srv.AddChannel(slacktest.Channel{Name: "secret", NotMember: true})
	a := newAdapter(t, srv, nil)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		req  channel.SendRequest
		want channel.Code
	}{
		{"too long", channel.SendRequest{ChatID: general.ID, Text: strings.Repeat("x", MaxTextLength+1)}, channel.CodeMessageTooLong},
		{"escaped over", channel.SendRequest{ChatID: general.ID, Text: strings.Repeat("<", MaxTextLength/2)}, channel.CodeMessageTooLong},
		{"unknown", channel.SendRequest{ChatID: "C404", Text: "x"}, channel.CodeChatNotFound},
		{"not member", channel.SendRequest{ChatID: outside.ID, Text: "x"}, channel.CodeChatNotFound},
	} {
		_, err := a.Send(ctx, c.req)
		if channel.CodeOf(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: strings.Repeat("😀", MaxTextLength/2)}); err != nil {
		t.Errorf("exactly the limit in UTF-16 units: %v", err)
	}
	srv.Fail("chat.postMessage", 1, slacktest.Failure{RetryAfter: 3 * time.Second})
	_, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "x"})
	var ce *channel.Error
	if channel.CodeOf(err) != channel.CodeRateLimited || !asErr(err, &ce) || ce.RetryAfter != 3*time.Second {
		t.Errorf("429: %v", err)
	}
	srv.Fail("chat.update", 1, slacktest.Failure{RetryAfter: 2 * time.Second})
	r, _ := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "x"})
	err = a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: r.MessageIDs[0], Text: "y"})
	if channel.CodeOf(err) != channel.CodeRateLimited {
		t.Errorf("edit 429: %v", err)
	}
	srv.Fail("chat.postMessage", 1, slacktest.Failure{Status: 502})
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "x"}); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Errorf("502: %v", err)
	}
}

// TestEditButtons: a message with buttons (a turn card with Stop) is
// edited keeping them, and an edit without buttons clears them; a press
// comes back as an Action, acknowledged once the host stored it.
func TestEditButtons(t *testing.T) {
	t.Parallel()
	srv, general := bobInGeneral(t)
	a := newAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	a.runReady(t, inbox)
	ctx := context.Background()
	stop := [][]channel.Button{{{ID: "stop:1", Label: "Stop"}}}
	r, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "working…", Buttons: stop})
	if err != nil {
		t.Fatal(err)
	}
	ts := r.MessageIDs[0]
	if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: ts, Text: "still working", Buttons: stop}); err != nil {
		t.Fatal(err)
	}
	m := srv.BotMessages(general.ID, "")[0]
	if m.Text != "still working" || m.Edits != 1 || len(m.Buttons()) != 1 || m.Buttons()[0] != (slacktest.Button{ActionID: "stop:1", Label: "Stop"}) {
		t.Fatalf("card: %+v %+v", m, m.Buttons())
	}
	env, err := srv.Press(bob.ID, general.ID, ts, "stop:1")
	if err != nil {
		t.Fatal(err)
	}
	in := inbox.Wait(t, 1)[0]
	if in.Action == nil || in.Action.ButtonID != "stop:1" || in.Action.MessageID != ts || in.Text != "Stop" || in.Sender.ID != bob.ID ||
		in.ChatID != general.ID || !strings.HasPrefix(in.MessageID, "act:") {
		t.Errorf("press: %+v", in)
	}
	waitFake(t, srv, "the press acked", func() bool { return srv.Acked(env) })
	if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: ts, Text: "done"}); err != nil {
		t.Fatal(err)
	}
	if m := srv.BotMessages(general.ID, "")[0]; m.Text != "done" || len(m.Buttons()) != 0 {
		t.Errorf("an edit without buttons keeps some: %+v", m)
	}
	for _, bad := range [][][]channel.Button{
		{{{ID: "", Label: "x"}}}, {{{ID: "a", Label: "x"}, {ID: "a", Label: "y"}}}, {{{ID: "a", Label: " "}}},
		{{{ID: "a", Label: strings.Repeat("l", 76)}}},
	} {
		if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "q", Buttons: bad}); channel.CodeOf(err) != channel.CodeInvalidRequest {
			t.Errorf("buttons %v: %v", bad, err)
		}
	}
}

// TestPressAckedAtDeadline: a press the host is slow to store is
// acknowledged before Slack's 3 s run out and still delivered.
func TestPressAckedAtDeadline(t *testing.T) {
	t.Parallel()
	srv, general := bobInGeneral(t)
	a := newAdapter(t, srv, nil)
	release := make(chan struct{})
	inbox := &sdktest.Inbox{}
	inbox.Decide = func(ctx context.Context, _ int, _ []channel.InboundMessage) error {
		<-release
		return nil
	}
	a.runReady(t, inbox)
	r, err := a.Send(context.Background(), channel.SendRequest{ChatID: general.ID, Text: "approve?",
		Buttons: [][]channel.Button{{{ID: "yes", Label: "Yes"}, {ID: "no", Label: "No"}}}})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := srv.Press(bob.ID, general.ID, r.MessageIDs[0], "no")
	waitFake(t, srv, "the press acked while the host is busy", func() bool { return srv.Acked(env) })
	close(release)
	if in := inbox.Wait(t, 1)[0]; in.Action == nil || in.Action.ButtonID != "no" {
		t.Errorf("press: %+v", in)
	}
}

// TestDirectToUser: a Send to a user id lands in the bot's DM with them;
// Edit and React addressed by the user id find the message.
func TestDirectToUser(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddUser(alice)
	a := newAdapter(t, srv, nil)
	ctx := context.Background()
	r, err := a.Send(ctx, channel.SendRequest{ChatID: alice.ID, Text: "approve?"})
	if err != nil {
		t.Fatal(err)
	}
	dm := srv.DM(alice.ID)
	if dm == "" || len(srv.BotMessages(dm, "")) != 1 {
		t.Fatalf("no DM message: %q", dm)
	}
	if err := a.Edit(ctx, channel.EditRequest{ChatID: alice.ID, MessageID: r.MessageIDs[0], Text: "approved"}); err != nil {
		t.Fatal(err)
	}
	if err := a.React(ctx, channel.ReactRequest{ChatID: alice.ID, MessageID: r.MessageIDs[0], Emoji: "👀"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reactions(dm, r.MessageIDs[0]); len(got) != 1 || got[0] != "eyes" {
		t.Errorf("reactions: %v", got)
	}
	if err := a.React(ctx, channel.ReactRequest{ChatID: alice.ID, MessageID: r.MessageIDs[0], Remove: true}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reactions(dm, r.MessageIDs[0]); len(got) != 0 {
		t.Errorf("reaction not removed: %v", got)
	}
}

// TestFiles: a file shared with the bot is delivered as media and
// downloaded with the bot token; a file sent is uploaded in the three
// steps and shared in the thread with its caption.
func TestFiles(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dm := srv.AddDM(alice)
	a := newAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	a.runReady(t, inbox)
	f := srv.AddFile("notes.txt", "text/plain", []byte("file body"))
	srv.Post(slacktest.Message{Channel: dm.ID, User: alice.ID, Text: "see attached", Files: []slacktest.File{f}})
	in := inbox.Wait(t, 1)[0]
	if len(in.Media) != 1 || in.Media[0].Kind != channel.MediaDocument || in.Media[0].Filename != "notes.txt" || in.Media[0].Size != 9 {
		t.Fatalf("media: %+v", in.Media)
	}
	ctx := context.Background()
	rc, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(body) != "file body" {
		t.Errorf("download: %q %v", body, err)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref, MaxBytes: 4}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Errorf("over MaxBytes: %v", err)
	}

	path := filepath.Join(t.TempDir(), "chart.png")
	if err := os.WriteFile(path, []byte("\x89PNG fake"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := a.Send(ctx, channel.SendRequest{ChatID: dm.ID, ThreadID: in.MessageID,
		Media: []channel.OutboundMedia{{Path: path, Kind: channel.MediaImage, Caption: "the chart"}}})
	if err != nil {
		t.Fatal(err)
	}
	files := srv.Files()
	if len(files) != 1 || files[0].Name != "chart.png" || string(files[0].Data) != "\x89PNG fake" || files[0].ThreadTS != in.MessageID || r.MessageIDs[0] != files[0].ID {
		t.Fatalf("uploaded: %+v %v", files, r)
	}
	if got := srv.BotMessages(dm.ID, in.MessageID); len(got) != 1 || got[0].Text != "the chart" {
		t.Errorf("share message: %+v", got)
	}
}

// TestSlashCommand: "/claw new" is /new, acknowledged once stored;
// another app's command is acknowledged and skipped.
func TestSlashCommand(t *testing.T) {
	t.Parallel()
	srv, general := bobInGeneral(t)
	a := newAdapter(t, srv, nil)
	inbox := &sdktest.Inbox{}
	a.runReady(t, inbox)
	other := srv.Slash(bob.ID, general.ID, "/other", "x")
	env := srv.Slash(bob.ID, general.ID, "/claw", "new")
	in := inbox.Wait(t, 1)[0]
	if in.Text != "/new" || in.ChatID != general.ID || in.Sender.ID != bob.ID || !in.WasMentioned {
		t.Errorf("slash: %+v", in)
	}
	waitFake(t, srv, "both acked", func() bool { return srv.Acked(env) && srv.Acked(other) })
	if n := len(inbox.Stored()); n != 1 {
		t.Errorf("%d messages", n)
	}
}

func asErr(err error, target **channel.Error) bool {
	ce, ok := err.(*channel.Error)
	if ok {
		*target = ce
	}
	return ok
}

// TestMissingScopeAtRuntime: a call Slack refuses for a missing scope
// (reactions:write) fails forbidden and the status page says which scope
// and what to do; once the call works again the plugin is ready.
func TestMissingScopeAtRuntime(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	general := srv.AddChannel(slacktest.Channel{Name: "general"})
	a := newAdapter(t, srv, nil)
	ctx := context.Background()
	r, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Fail("reactions.add", 1, slacktest.Failure{Error: "missing_scope"})
	err = a.React(ctx, channel.ReactRequest{ChatID: general.ID, MessageID: r.MessageIDs[0], Emoji: "👀"})
	if channel.CodeOf(err) != channel.CodeForbidden {
		t.Errorf("react: %v", err)
	}
	st := waitState(t, a.reports, status.Degraded)
	if !strings.Contains(st.Message, "reactions.add") || !strings.Contains(st.Message, "missing_scope") {
		t.Errorf("status: %+v", st)
	}
	if err := a.React(ctx, channel.ReactRequest{ChatID: general.ID, MessageID: r.MessageIDs[0], Emoji: "👀"}); err != nil {
		t.Fatal(err)
	}
	waitState(t, a.reports, status.Ready)
}

// The host's rendering of a markdown send (SendRequest.Rendered) is what
// Slack receives when it was made for mrkdwn; without one, or with one for
// another markup, the text is posted as written (the plugin links no
// markdown parser).
func TestSendTakesTheHostsRendering(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	general := srv.AddChannel(slacktest.Channel{Name: "general"})
	a := newAdapter(t, srv, nil)
	ctx := context.Background()
	const md = "**done**: see [the docs](https://e.com) & <@U1>\n\n| a | bb |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n```go\nx := 1\n```"
	send := func(pre *channel.Rendered) string {
		t.Helper()
		r, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: md, Format: channel.FormatMarkdown, Rendered: pre})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range srv.BotMessages(general.ID, "") {
			if m.TS == r.MessageIDs[0] {
				return m.Text
			}
		}
		t.Fatalf("message %s not at the fake", r.MessageIDs[0])
		return ""
	}
	host := markup.RenderFor(md, channel.MarkupMrkdwn)
	if got := send(host); got != host.Text || !strings.Contains(got, "<https://e.com|the docs>") {
		t.Errorf("with the host's rendering Slack got %q, want %q", got, host.Text)
	}
	// Unlike the text's own rendering, so that the test tells which was sent.
	if got := send(&channel.Rendered{Markup: channel.MarkupMrkdwn, Text: "from the host", Visible: "from the host"}); got != "from the host" {
		t.Errorf("a rendering for mrkdwn not taken: posted %q", got)
	}
	// Without one, or with one for another markup: the text as written.
	escaped := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(md)
	for _, pre := range []*channel.Rendered{nil, {Markup: channel.MarkupLightweight, Text: "from the host", Visible: "from the host"}} {
		if got := send(pre); got != escaped {
			t.Errorf("rendering %+v: posted %q, want %q", pre, got, escaped)
		}
	}
}
