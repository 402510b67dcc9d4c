package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mau.fi/whatsmeow"

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
