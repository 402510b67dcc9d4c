package e2e

// Thread context (issue 78, part 5): the first turn of a thread's session
// carries the post the thread hangs from and its earlier messages, fenced
// as context; a later turn of the same thread does not repeat them.

import (
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestSlackThreadContext(t *testing.T) {
	t.Parallel()
	e := startSlackDaemon(t)
	// A thread that began before anyone asked the bot: Slack sent no
	// event for these (the bot was not in the channel yet).
	parent := e.srv.Seed(slacktest.Message{Channel: e.general, User: slBob.ID, Text: "PARENTPOST the deploy failed at step 3"})
	e.srv.Seed(slacktest.Message{Channel: e.general, User: slAlice.ID, ThreadTS: parent, Text: "EARLIERREPLY the logs say disk full"})

	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, ThreadTS: parent, Text: slMention("what went wrong? FIRSTQ")})
	e.waitMessage(t, e.general, parent, "FIRSTQ")
	first := requestWith(e.fake, "FIRSTQ")
	if first == nil {
		t.Fatal("no request carries the first question")
	}
	text := first.LastUserText()
	for _, want := range []string{envelope.ThreadMarker, "PARENTPOST the deploy failed at step 3", "EARLIERREPLY the logs say disk full",
		"Source: " + envelope.SourceThread, envelope.CurrentMarker} {
		if !strings.Contains(text, want) {
			t.Fatalf("the first turn's prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "PARENTPOST") > strings.Index(text, "EARLIERREPLY") || strings.Index(text, "EARLIERREPLY") > strings.Index(text, "FIRSTQ") {
		t.Fatalf("the thread is not in order before the question:\n%s", text)
	}
	// Bob's own post is quoted; another person's is fenced as untrusted
	// content.
	if !strings.Contains(text, "[Thread post by bob") || !strings.Contains(text, "<<<EXTERNAL_UNTRUSTED_CONTENT") {
		t.Fatalf("the thread's posts are not fenced:\n%s", text)
	}

	e.srv.Post(slacktest.Message{Channel: e.general, User: slBob.ID, ThreadTS: parent, Text: slMention("and now? SECONDQ")})
	e.waitMessage(t, e.general, parent, "SECONDQ")
	sdktest.WaitFor(t, "the second question's request", func() bool { return requestWith(e.fake, "SECONDQ") != nil })
	if second := requestWith(e.fake, "SECONDQ").LastUserText(); strings.Contains(second, "PARENTPOST") || strings.Contains(second, envelope.ThreadMarker) {
		t.Fatalf("a later turn repeats the thread's context:\n%s", second)
	}
	// One conversations.replies for the thread, not one per message.
	if n := len(e.srv.Requests("conversations.replies")); n != 1 {
		t.Fatalf("conversations.replies called %d times, want 1", n)
	}
}

// TestDiscordThreadContext: a Discord thread's first turn carries the
// message it was started from (in the parent channel, with the thread's
// id) and the thread's earlier messages; a later turn does not.
func TestDiscordThreadContext(t *testing.T) {
	t.Parallel()
	fake, e, _ := discordWithRealClaude(t)
	e.srv.Seed(discordtest.Message{ID: e.thread.ID, ChannelID: e.general.ID, Author: dcBob, Content: "STARTERPOST should we ship friday"})
	e.srv.Seed(discordtest.Message{ChannelID: e.thread.ID, Author: dcCarol, Content: "EARLIERREPLY not before the tests pass"})
	mention := "<@" + discordtest.BotID + "> "
	e.srv.Push(discordtest.Message{ChannelID: e.thread.ID, Author: dcBob, Content: mention + "what do you think? FIRSTQ", Mentions: []discordtest.User{e.srv.Bot()}})
	e.waitMessage(t, e.thread.ID, "FIRSTQ")
	text := requestWith(fake, "FIRSTQ").LastUserText()
	for _, want := range []string{envelope.ThreadMarker, "[Thread post by bob", "STARTERPOST should we ship friday",
		"Source: " + envelope.SourceThread, "EARLIERREPLY not before the tests pass"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the first turn's prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "STARTERPOST") > strings.Index(text, "EARLIERREPLY") {
		t.Fatalf("not in order:\n%s", text)
	}
	e.srv.Push(discordtest.Message{ChannelID: e.thread.ID, Author: dcBob, Content: mention + "and now? SECONDQ", Mentions: []discordtest.User{e.srv.Bot()}})
	e.waitMessage(t, e.thread.ID, "SECONDQ")
	if second := requestWith(fake, "SECONDQ").LastUserText(); strings.Contains(second, "STARTERPOST") {
		t.Fatalf("a later turn repeats the thread's context:\n%s", second)
	}
}
