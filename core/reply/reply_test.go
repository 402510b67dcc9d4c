package reply

import (
	"strings"
	"testing"
)

func TestParseReplyTags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, text string
		target         ReplyTarget
	}{
		{"none", "hello [x]", "hello [x]", ReplyTarget{}},
		{"current", "[[reply_to_current]] hi", "hi", ReplyTarget{Current: true}},
		{"id", "hi [[ Reply_To : 42 ]]", "hi", ReplyTarget{MessageID: "42"}},
		{"first wins", "[[reply_to:7]] a [[reply_to_current]]", "a", ReplyTarget{MessageID: "7"}},
		{"empty id ignored", "[[reply_to:]] a", "a", ReplyTarget{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text, target := ParseReplyTags(tc.in)
			if text != tc.text || target != tc.target {
				t.Errorf("got %q %+v, want %q %+v", text, target, tc.text, tc.target)
			}
		})
	}
}

func TestNormalizeTagsAndPrefix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		in     Payload
		opts   Options
		text   string
		reason SkipReason
	}{
		{"tag then silent", Payload{Text: "[[reply_to_current]] NO_REPLY"}, Options{}, "", SkipSilent},
		{"streamed prefix", Payload{Text: "NO_RE"}, Options{}, "", SkipSilent},
		{"harmony marker", Payload{Text: "<|channel|>"}, Options{}, "", SkipArtifact},
		{"template", Payload{Text: "hi"}, Options{ResponsePrefix: "[{Provider}/{model} {identity.name} {unknown}]", PrefixContext: PrefixContext{Provider: "anthropic", Model: "opus", IdentityName: "Claw"}}, "[anthropic/opus Claw {unknown}] hi", Deliver},
		{"heartbeat prefix skipped", Payload{Text: "HEARTBEAT_OK", MediaURLs: []string{"u"}}, Options{ResponsePrefix: "[bot]"}, "", Deliver},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, reason := Normalize(tc.in, tc.opts)
			if reason != tc.reason || got.Text != tc.text {
				t.Errorf("got %q (%q), want %q (%q)", got.Text, reason, tc.text, tc.reason)
			}
		})
	}
}

// FuzzNormalize checks that a delivered reply never still consists of the
// silent token, and never carries a reply tag.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"NO_REPLY", "hi NO_REPLY", "**no_reply**", "HEARTBEAT_OK x", "[[reply_to:1]] NO_REPLY", "<thinking>x</thinking>\nNO_REPLY"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, reason := Normalize(Payload{Text: text}, Options{})
		if reason != Deliver {
			return
		}
		if IsSilentReplyText(got.Text, "") || jsTrim(got.Text) == "" {
			t.Fatalf("%q delivered as %q", text, got.Text)
		}
		if replyTag().MatchString(got.Text) && strings.Contains(text, "[[") {
			if _, tgt := ParseReplyTags(got.Text); !tgt.IsZero() {
				t.Fatalf("tag survived: %q", got.Text)
			}
		}
	})
}

func TestShortModel(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{"claude-opus-5-5": "opus", "claude-3-5-sonnet-20241022": "sonnet", "claude-haiku-4-5@20251001": "haiku", "opus": "opus", "": "", "gpt-4o": "gpt"} {
		if got := ShortModel(id); got != want {
			t.Errorf("ShortModel(%q) = %q, want %q", id, got, want)
		}
	}
}
