package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/channel"
)

func TestSendError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want channel.Code
	}{
		{whatsmeow.ErrNotConnected, channel.CodeUnavailable},
		{whatsmeow.ErrNotLoggedIn, channel.CodeUnavailable},
		{fmt.Errorf("get devices: %w", whatsmeow.ErrIQDisconnected), channel.CodeUnavailable},
		{&whatsmeow.DisconnectedError{Action: "message send"}, channel.CodeUncertain},
		{whatsmeow.ErrMessageTimedOut, channel.CodeUncertain},
		{context.DeadlineExceeded, channel.CodeUncertain},
		{fmt.Errorf("failed to get group members: %w", whatsmeow.ErrNotInGroup), channel.CodeChatNotFound},
		{whatsmeow.ErrGroupNotFound, channel.CodeChatNotFound},
		{errors.New("failed to get LID for PN 1@s.whatsapp.net: no LID found"), channel.CodeChatNotFound},
		{fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 429), channel.CodeRateLimited},
		{fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 463), channel.CodeForbidden},
		{fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 503), channel.CodeUnavailable},
		{whatsmeow.ErrIQRateOverLimit, channel.CodeRateLimited},
		{whatsmeow.ErrIQNotFound, channel.CodeChatNotFound},
		{errors.New("something else"), channel.CodeInternal},
	}
	for _, c := range cases {
		if got := channel.CodeOf(sendError(c.err)); got != c.want {
			t.Errorf("%v → %s, want %s", c.err, got, c.want)
		}
	}
	if e := sendError(whatsmeow.ErrIQRateOverLimit).(*channel.Error); e.RetryAfter <= 0 {
		t.Error("rate_limited without retry_after")
	}
}

// TestSendNotConnected: before a connection Send fails retryably, and an
// unknown chat is chat_not_found whatever the connection.
func TestSendNotConnected(t *testing.T) {
	t.Parallel()
	a, _, _, _ := testAdapter(t, nil)
	if _, err := a.Send(t.Context(), channel.SendRequest{ChatID: "+15550000002", Text: "hi"}); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Errorf("not connected: %v", err)
	}
	if _, err := a.Send(t.Context(), channel.SendRequest{ChatID: "missing-conformance-chat", Text: "hi"}); channel.CodeOf(err) != channel.CodeChatNotFound {
		t.Errorf("unknown chat: %v", err)
	}
	if err := a.SetTyping(t.Context(), channel.TypingRequest{ChatID: "+15550000002", On: true}); channel.CodeOf(err) != channel.CodeUnavailable {
		t.Errorf("typing while not connected: %v", err)
	}
	if _, _, err := a.DownloadMedia(t.Context(), channel.DownloadRequest{Ref: "nope"}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("bad ref: %v", err)
	}
}

// The host's rendering of a markdown send (SendRequest.Rendered) is what
// the fake WhatsApp receives when it was made for markup.Lightweight;
// without one, or with one for another markup, the markdown goes as it is
// (the plugin links no markdown parser).
func TestSendTakesTheHostsRendering(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	r := startLinked(t, srv, t.TempDir(), nil)
	contact(t, srv, "15550003333", "200000000000003", "Cy")
	ctx := ctxLong(t)
	const md = "**done**: see [the docs](https://e.com) & ~~not~~ _this_\n\n| a | bb |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n```go\nx := 1\n```"
	send := func(pre *channel.Rendered) string {
		t.Helper()
		resp, err := r.a.Send(ctx, channel.SendRequest{ChatID: "+15550003333", Text: md, Format: channel.FormatMarkdown, Rendered: pre})
		if err != nil || len(resp.MessageIDs) != 1 {
			t.Fatalf("send: %v %v", resp, err)
		}
		sent, err := srv.WaitSent(ctx, func(s whatsapptest.SentMessage) bool { return s.ID == resp.MessageIDs[0] })
		if err != nil {
			t.Fatal(err)
		}
		return sent.Text()
	}
	host := markup.RenderFor(md, channel.MarkupLightweight)
	if got := send(host); got != host.Text || !strings.Contains(got, "*done*") {
		t.Errorf("with the host's rendering WhatsApp got %q, want %q", got, host.Text)
	}
	// Unlike the text's own rendering, so that the test tells which was sent.
	if got := send(&channel.Rendered{Markup: channel.MarkupLightweight, Text: "from the host", Visible: "from the host"}); got != "from the host" {
		t.Errorf("a rendering for lightweight not taken: sent %q", got)
	}
	for _, pre := range []*channel.Rendered{nil, {Markup: channel.MarkupMrkdwn, Text: "from the host", Visible: "from the host"}} {
		if got := send(pre); got != md {
			t.Errorf("rendering %+v: sent %q, want the markdown as it is", pre, got)
		}
	}
}
