package reply

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"testing"
)

func TestVectorsTokens(t *testing.T) {
	t.Parallel()
	boolFns := map[string]func(string, string) bool{
		"tokens.isSilentReplyText":        IsSilentReplyText,
		"tokens.isSilentReplyPayloadText": IsSilentReplyPayloadText,
		"tokens.startsWithSilentToken":    StartsWithSilentToken,
	}
	strFns := map[string]func(string, string) string{
		"tokens.stripSilentToken":        StripSilentToken,
		"tokens.stripLeadingSilentToken": StripLeadingSilentToken,
	}
	for group, fn := range boolFns {
		vectors.Func(t, group, func(in string) bool { return fn(in, "") })
	}
	for group, fn := range strFns {
		vectors.Func(t, group, func(in string) string { return fn(in, "") })
	}
}

func TestVectorsStripHeartbeatToken(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "heartbeat.stripHeartbeatToken", func(t *testing.T, tc vectors.Case) {
		var in string
		var p struct {
			Mode        HeartbeatMode `json:"mode"`
			MaxAckChars *int          `json:"maxAckChars"`
		}
		var want struct {
			ShouldSkip bool   `json:"shouldSkip"`
			Text       string `json:"text"`
			DidStrip   bool   `json:"didStrip"`
		}
		tc.Decode(t, &in, &p, &want)
		got := StripHeartbeatToken(in, HeartbeatOptions{Mode: p.Mode, MaxAckChars: p.MaxAckChars})
		if got != HeartbeatResult(want) {
			t.Errorf("%q: got %+v, want %+v", in, got, want)
		}
	})
}

func TestVectorsNormalizeReplyPayload(t *testing.T) {
	t.Parallel()
	type jsPayload struct {
		Text     *string `json:"text,omitempty"`
		MediaURL string  `json:"mediaUrl,omitempty"`
	}
	vectors.Each(t, "normalizeReplyPayload", func(t *testing.T, tc vectors.Case) {
		var in jsPayload
		var p struct {
			ResponsePrefix        string `json:"responsePrefix"`
			SilentToken           string `json:"silentToken"`
			ResponsePrefixContext *struct {
				Model string `json:"model"`
			} `json:"responsePrefixContext"`
		}
		var want *jsPayload
		tc.Decode(t, &in, &p, &want)
		payload := Payload{}
		if in.Text != nil {
			payload.Text = *in.Text
		}
		if in.MediaURL != "" {
			payload.MediaURLs = []string{in.MediaURL}
		}
		opts := Options{ResponsePrefix: p.ResponsePrefix, SilentToken: p.SilentToken}
		if p.ResponsePrefixContext != nil {
			opts.PrefixContext.Model = p.ResponsePrefixContext.Model
		}
		got, reason := Normalize(payload, opts)
		switch {
		case want == nil && reason == Deliver:
			t.Errorf("got %+v, want suppression", got)
		case want != nil && reason != Deliver:
			t.Errorf("suppressed (%s), want %+v", reason, *want)
		case want != nil:
			wantMedia := []string(nil)
			if want.MediaURL != "" {
				wantMedia = []string{want.MediaURL}
			}
			if got.Text != *want.Text || len(got.MediaURLs) != len(wantMedia) || (len(wantMedia) == 1 && got.MediaURLs[0] != wantMedia[0]) {
				t.Errorf("got %+v, want %+v", got, *want)
			}
		}
	})
}
