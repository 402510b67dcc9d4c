package discord

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestSend covers outbound messages: replies reference the message without
// failing when it is gone, mentions never ping, thread targets, markdown
// tables, the 2000-character limit, 429 and unknown channels.
func TestSend(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	thread := srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelPublicThread, GuildID: guildID, Name: "t", ParentID: general.ID})
	asked := srv.Push(discordtest.Message{ChannelID: general.ID, Author: bob, Content: "question"})
	a := newAdapter(t, srv, "", nil)
	ctx := context.Background()

	res, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, ReplyToMessageID: asked.ID, Text: "hi @everyone <@&1>", Format: channel.FormatMarkdown})
	if err != nil || len(res.MessageIDs) != 1 {
		t.Fatalf("send: %v %v", res, err)
	}
	sent := srv.Sent()
	s := sent[len(sent)-1]
	if s.ChannelID != general.ID || s.Content != "hi @everyone <@&1>" {
		t.Errorf("sent %+v", s)
	}
	if s.Reference == nil || s.Reference.MessageID != asked.ID || s.Reference.FailIfNotExists == nil || *s.Reference.FailIfNotExists {
		t.Errorf("message_reference %+v, want %s with fail_if_not_exists=false", s.Reference, asked.ID)
	}
	var am struct {
		Parse []string `json:"parse"`
	}
	if err := json.Unmarshal(s.AllowedMentions, &am); err != nil || am.Parse == nil || len(am.Parse) != 0 {
		t.Errorf("allowed_mentions %s, want parse: []", s.AllowedMentions)
	}

	cases := []struct {
		name string
		req  channel.SendRequest
		// code is the error code wanted ("" for success); want the content.
		code channel.Code
		want string
		to   string
	}{
		{name: "thread", req: channel.SendRequest{ChatID: general.ID, ThreadID: thread.ID, Text: "in thread", Format: channel.FormatMarkdown}, want: "in thread", to: thread.ID},
		{name: "table", req: channel.SendRequest{ChatID: general.ID, Text: "| a | bb |\n|---|---|\n| 1 | 2 |", Format: channel.FormatMarkdown,
			Rendered: markup.RenderFor("| a | bb |\n|---|---|\n| 1 | 2 |", channel.MarkupMarkdown)},
			want: "```\na | bb\n--+---\n1 | 2\n```", to: general.ID},
		{name: "plain escaped", req: channel.SendRequest{ChatID: general.ID, Text: "a *b* _c_", Format: channel.FormatPlain}, want: `a \*b\* \_c\_`, to: general.ID},
		{name: "limit", req: channel.SendRequest{ChatID: general.ID, Text: strings.Repeat("é", 2000), Format: channel.FormatMarkdown}, want: strings.Repeat("é", 2000), to: general.ID},
		{name: "too long", req: channel.SendRequest{ChatID: general.ID, Text: strings.Repeat("x", 2001), Format: channel.FormatMarkdown}, code: channel.CodeMessageTooLong},
		{name: "unknown channel", req: channel.SendRequest{ChatID: "123456789012345678", Text: "x", Format: channel.FormatMarkdown}, code: channel.CodeChatNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(srv.Sent())
			_, err := a.Send(ctx, c.req)
			if channel.CodeOf(err) != c.code {
				t.Fatalf("err %v, want code %q", err, c.code)
			}
			if c.code != "" {
				return
			}
			s := srv.Sent()[n]
			if s.Content != c.want || s.ChannelID != c.to {
				t.Errorf("sent %q to %s, want %q to %s", s.Content, s.ChannelID, c.want, c.to)
			}
		})
	}

	t.Run("rate limited", func(t *testing.T) {
		srv.Fail(discordtest.RouteCreate, 1, discordtest.Failure{Status: 429, RetryAfter: 1500 * time.Millisecond})
		start := time.Now()
		_, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "x", Format: channel.FormatMarkdown})
		var ce *channel.Error
		if channel.CodeOf(err) != channel.CodeRateLimited || !asErr(err, &ce) || ce.RetryAfter != 1500*time.Millisecond {
			t.Fatalf("err %v, want rate_limited retry after 1.5s", err)
		}
		if time.Since(start) > time.Second {
			t.Errorf("send waited %v: discordgo slept on the 429", time.Since(start))
		}
		if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "again", Format: channel.FormatMarkdown}); err != nil {
			t.Errorf("send after the 429: %v", err)
		}
	})

	t.Run("edit and typing", func(t *testing.T) {
		res, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "draft", Format: channel.FormatMarkdown})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: res.MessageIDs[0], Text: "final", Format: channel.FormatMarkdown}); err != nil {
			t.Fatal(err)
		}
		msgs := srv.Messages(general.ID)
		if last := msgs[len(msgs)-1]; last.ID != res.MessageIDs[0] || last.Content != "final" {
			t.Errorf("after edit: %+v", last)
		}
		if err := a.SetTyping(ctx, channel.TypingRequest{ChatID: general.ID, ThreadID: thread.ID, On: true}); err != nil {
			t.Fatal(err)
		}
		if err := a.SetTyping(ctx, channel.TypingRequest{ChatID: general.ID, On: false}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests(discordtest.RouteTyping)
		if len(reqs) != 1 || !strings.Contains(reqs[0].Path, thread.ID) {
			t.Errorf("typing requests %+v, want one to the thread", reqs)
		}
	})

	t.Run("file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "report.csv")
		if err := os.WriteFile(p, []byte("a,b\n1,2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		n := len(srv.Sent())
		if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Media: []channel.OutboundMedia{{Path: p, Kind: channel.MediaDocument, Caption: "the report"}}}); err != nil {
			t.Fatal(err)
		}
		s := srv.Sent()[n]
		if len(s.Files) != 1 || s.Files[0].Filename != "report.csv" || string(s.Files[0].Data) != "a,b\n1,2\n" || s.Content != "the report" {
			t.Errorf("sent %+v", s)
		}
	})
}

func asErr(err error, target **channel.Error) bool {
	e, ok := err.(*channel.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestSlashCommands: the menu is registered per guild once the app id is
// known; an interaction is deferred and delivered as "/name args"; the
// reply replaces "thinking…", the next is a follow-up, an edit goes
// through the webhook; a newer message in the chat is answered there.
func TestSlashCommands(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", map[string]any{"guilds": []string{guildID}})
	ctx := context.Background()
	menu := []channel.MenuEntry{{Name: "new", Description: "Start a new session"}, {Name: "Bad Name!", Description: "x"}, {Name: "status", Description: ""}}
	if err := a.SetCommands(ctx, menu); err != nil {
		t.Fatal(err)
	}
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	sdktest.WaitFor(t, "commands registered", func() bool { return len(srv.Commands(guildID)) > 0 })
	cmds := srv.Commands(guildID)
	if len(cmds) != 2 || cmds[0].Name != "new" || cmds[1].Name != "status" || cmds[1].Description != "status" || len(cmds[0].Options) != 1 {
		t.Errorf("registered %+v", cmds)
	}
	if len(srv.Commands("")) != 0 {
		t.Errorf("registered globally as well")
	}

	in := srv.PushCommand(general, bob, "model", "sonnet fast")
	msg := inbox.Wait(t, 1)[0]
	if msg.Text != "/model sonnet fast" || msg.MessageID != in.ID || !msg.WasMentioned || msg.ChatID != general.ID {
		t.Errorf("delivered %+v", msg)
	}
	cb := srv.Callbacks()
	if len(cb) != 1 || cb[0].Type != 5 {
		t.Fatalf("callbacks %+v, want one deferral (type 5)", cb)
	}
	r1, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "first", Format: channel.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "second", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: r1.MessageIDs[0], Text: "first, edited", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, s := range srv.Sent() {
		methods = append(methods, s.Method+":"+s.Content)
	}
	if want := "original:first followup:second original:first, edited"; strings.Join(methods, " ") != want {
		t.Errorf("sent %q, want %q", strings.Join(methods, " "), want)
	}
	srv.Push(discordtest.Message{ChannelID: general.ID, Author: bob, Content: "plain message"})
	inbox.Wait(t, 2)
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "in the channel", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if s := srv.Sent(); s[len(s)-1].Method != "create" {
		t.Errorf("reply after a newer message went %s, want into the channel", s[len(s)-1].Method)
	}

	// An expired token (the fake forgets it): the answer goes to the channel.
	srv.PushCommand(general, bob, "status", "")
	inbox.Wait(t, 3)
	srv.Fail(discordtest.RouteEditOriginal, 1, discordtest.Failure{Status: 404, Code: 10015, Message: "Unknown Webhook"})
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "late", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if s := srv.Sent(); s[len(s)-1].Method != "create" || s[len(s)-1].Content != "late" {
		t.Errorf("expired interaction answered by %+v", s[len(s)-1])
	}
}

// TestThreadPerConversation: a mention in a channel opens a thread on the
// message, the message is delivered in it, replies go there, and a
// message in the bot's thread counts as addressed.
func TestThreadPerConversation(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", map[string]any{"thread_per_conversation": true})
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	m := srv.Push(discordtest.Message{ChannelID: general.ID, Author: bob, Content: mention(discordtest.BotID) + " plan the release", Mentions: []discordtest.User{srv.Bot()}})
	in := inbox.Wait(t, 1)[0]
	if in.ChatID != general.ID || in.ThreadID != m.ID {
		t.Fatalf("delivered in %s/%s, want thread %s of %s", in.ChatID, in.ThreadID, m.ID, general.ID)
	}
	if reqs := srv.Requests(discordtest.RouteStartThread); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"name":"plan the release"`) {
		t.Errorf("thread start requests %+v", reqs)
	}
	srv.Push(discordtest.Message{ChannelID: m.ID, Author: bob, Content: "no mention needed"})
	in2 := inbox.Wait(t, 2)[1]
	if in2.ThreadID != m.ID || !in2.WasMentioned {
		t.Errorf("message in the bot's thread: %+v", in2)
	}
	if _, err := a.Send(context.Background(), channel.SendRequest{ChatID: general.ID, ThreadID: in.ThreadID, Text: "on it", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if s := srv.Sent(); s[len(s)-1].ChannelID != m.ID {
		t.Errorf("reply went to %s, want the thread", s[len(s)-1].ChannelID)
	}
}

// TestSendAnswerLost: Discord posted the message but its answer was lost
// on the way back: the send is uncertain (the host does not post it
// again), not unavailable; a failure before anything was sent stays
// retryable.
func TestSendAnswerLost(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", nil)
	ctx := context.Background()
	srv.Fail(discordtest.RouteCreate, 1, discordtest.Failure{LoseAnswer: true})
	_, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "maybe posted"})
	if channel.CodeOf(err) != channel.CodeUncertain {
		t.Fatalf("lost answer: %v, want uncertain", err)
	}
	if ms := srv.Messages(general.ID); len(ms) != 1 || ms[0].Content != "maybe posted" {
		t.Fatalf("messages %+v: the fake should have posted it", ms)
	}
	srv.Fail(discordtest.RouteCreate, 1, discordtest.Failure{Status: 500, Message: "boom"})
	if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "not posted"}); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Fatalf("500: %v, want unavailable", err)
	}
}

// The host's rendering of a markdown send (SendRequest.Rendered) is what
// Discord receives when it was made for markup.Markdown; without one, or
// with one for another markup, the markdown goes as it is (Discord shows
// markdown; the plugin links no markdown parser).
func TestSendTakesTheHostsRendering(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", nil)
	ctx := context.Background()
	const md = "**done**: see [the docs](https://e.com) & <b>\n\n| a | bb |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n```go\nx := 1\n```"
	send := func(pre *channel.Rendered) string {
		t.Helper()
		n := len(srv.Sent())
		if _, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: md, Format: channel.FormatMarkdown, Rendered: pre}); err != nil {
			t.Fatal(err)
		}
		return srv.Sent()[n].Content
	}
	host := markup.RenderFor(md, channel.MarkupMarkdown)
	if got := send(host); got != host.Text || !strings.Contains(got, "--+---") {
		t.Errorf("with the host's rendering Discord got %q, want %q", got, host.Text)
	}
	for _, pre := range []*channel.Rendered{nil, {Markup: channel.MarkupMrkdwn, Text: "from the host", Visible: "from the host"}} {
		if got := send(pre); got != md {
			t.Errorf("rendering %+v: sent %q, want the markdown as it is", pre, got)
		}
	}
}
