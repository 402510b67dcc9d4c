package reply

import (
	"strings"
)

// ReplyTarget says which message a reply should quote or thread under.
type ReplyTarget struct {
	// Current is set by [[reply_to_current]]: reply to the message being
	// answered.
	Current bool
	// MessageID is set by [[reply_to:<id>]].
	MessageID string
}

// IsZero reports whether no target was requested.
func (t ReplyTarget) IsZero() bool { return !t.Current && t.MessageID == "" }

// Payload is one outbound reply.
type Payload struct {
	// Text is the reply text; it may be empty when media is attached.
	Text string
	// MediaURLs are attachments.
	MediaURLs []string
	// ReplyTo is filled by [Normalize] from reply tags in Text.
	ReplyTo ReplyTarget
}

// SkipReason says why [Normalize] suppressed a payload.
type SkipReason string

const (
	// Deliver means the payload should be sent.
	Deliver SkipReason = ""
	// SkipEmpty: no text and no media.
	SkipEmpty SkipReason = "empty"
	// SkipSilent: the reply was the silent token.
	SkipSilent SkipReason = "silent"
	// SkipHeartbeat: the reply was a bare heartbeat acknowledgement.
	SkipHeartbeat SkipReason = "heartbeat"
	// SkipArtifact: the reply was an internal formatting artifact (a
	// box-drawing rule or a harmony channel marker).
	SkipArtifact SkipReason = "artifact"
)

// Options configures [Normalize]. The zero value strips heartbeats, uses
// [SilentToken] and adds no prefix.
type Options struct {
	// ResponsePrefix is prepended (with a space) to every text reply; it may
	// contain template variables, see [ResolvePrefixTemplate].
	ResponsePrefix string
	// PrefixContext fills the template variables.
	PrefixContext PrefixContext
	// SilentToken overrides [SilentToken].
	SilentToken string
	// Heartbeat judges the reply of a heartbeat turn: HEARTBEAT_OK with a
	// short acknowledgement (at most DefaultAckMaxChars) is not delivered
	// either.
	Heartbeat bool
	// KeepHeartbeat disables HEARTBEAT_OK stripping.
	KeepHeartbeat bool
}

// isArtifact reports a reply that is only an internal marker: a harmony
// channel marker ("<|channel|>") or a box-drawing rule. The checks before
// each pattern are what it needs to match.
func isArtifact(text string) bool {
	return (strings.Contains(text, "|") && strings.Contains(text, "<") && harmonyMarker().MatchString(text)) ||
		(strings.Contains(text, "───") && boxDrawingHR().MatchString(text))
}

var (
	harmonyMarker = lazyRegexp(`^\s*(?:set-thought\s+)?<\w*\|[^>]*>\s*$`)
	boxDrawingHR  = lazyRegexp(`^\s*─{3,}\s*$`)
)

// Normalize prepares a reply for delivery (OpenClaw's normalizeReplyPayload)
// and reports why it was suppressed, if it was. In order: reply tags are
// parsed out; empty replies are dropped; a silent payload is dropped (or
// keeps only its media); a leading glued token and a trailing token are
// stripped; a leftover streamed token prefix is silent; HEARTBEAT_OK is
// stripped in message mode; internal formatting artifacts are dropped; the
// response prefix is prepended unless already present or the text is
// exactly HEARTBEAT_OK.
func Normalize(p Payload, opts Options) (Payload, SkipReason) {
	hasMedia := len(p.MediaURLs) > 0
	text, target := ParseReplyTags(p.Text)
	if !target.IsZero() {
		p.ReplyTo = target
	}
	trimmed := jsTrim(text)
	if trimmed == "" && !hasMedia {
		return Payload{}, SkipEmpty
	}
	token := tokenOrDefault(opts.SilentToken)
	if text != "" && IsSilentReplyPayloadText(text, token) {
		if !hasMedia {
			return Payload{}, SkipSilent
		}
		text = ""
	}
	if text != "" && StartsWithSilentToken(text, token) {
		text = StripLeadingSilentToken(text, token)
	}
	if text != "" && strings.Contains(text, token) && !IsSilentReplyText(text, token) {
		text = StripSilentToken(text, token)
		if text == "" && !hasMedia {
			return Payload{}, SkipSilent
		}
	}
	if text != "" && IsSilentReplyPrefixText(jsTrim(text), token) {
		if !hasMedia {
			return Payload{}, SkipSilent
		}
		text = ""
	}
	if text != "" && jsTrim(text) == "" {
		text = ""
	}
	if !opts.KeepHeartbeat && strings.Contains(text, HeartbeatToken) {
		mode := ModeMessage
		if opts.Heartbeat {
			mode = ModeHeartbeat
		}
		r := StripHeartbeatToken(text, HeartbeatOptions{Mode: mode})
		if r.ShouldSkip && !hasMedia {
			return Payload{}, SkipHeartbeat
		}
		text = r.Text
	}
	if text != "" && isArtifact(text) {
		if !hasMedia {
			return Payload{}, SkipArtifact
		}
		text = ""
	}
	if jsTrim(text) == "" && !hasMedia {
		return Payload{}, SkipEmpty
	}
	prefix := opts.ResponsePrefix
	if prefix != "" && !opts.PrefixContext.isZero() {
		prefix = ResolvePrefixTemplate(prefix, opts.PrefixContext)
	}
	if prefix != "" && text != "" && jsTrim(text) != HeartbeatToken && !strings.HasPrefix(text, prefix) {
		text = prefix + " " + text
	}
	p.Text = text
	return p, Deliver
}

// PrefixContext holds the values of response-prefix template variables.
type PrefixContext struct {
	// Model is the short model name ("opus"), {model}.
	Model string
	// ModelFull is the full model id, {modelFull}.
	ModelFull string
	// Provider is the model provider, {provider}.
	Provider string
	// ThinkingLevel is the thinking level, {thinkingLevel} or {think}.
	ThinkingLevel string
	// IdentityName is the agent's name, {identity.name} or {identityName}.
	IdentityName string
}

func (c PrefixContext) isZero() bool { return c == PrefixContext{} }

// ShortModel is a model id's family name for {model}: "claude-opus-5-5" →
// "opus", "claude-3-5-sonnet-20241022" → "sonnet"; an id with no such word
// (an alias like "opus" included) is returned as it is.
func ShortModel(id string) string {
	for _, part := range strings.Split(id, "-") {
		if part == "" || part == "claude" {
			continue
		}
		letters := true
		for _, r := range part {
			if r < 'a' || r > 'z' {
				letters = false
				break
			}
		}
		if letters {
			return part
		}
	}
	return id
}

var templateVar = lazyRegexp(`\{([A-Za-z][A-Za-z0-9_.]*)\}`)

// ResolvePrefixTemplate replaces {model}, {modelFull}, {provider},
// {thinkingLevel} (alias {think}) and {identity.name} (alias
// {identityName}) in tmpl, case-insensitively. Unknown variables and
// variables without a value are left as written.
func ResolvePrefixTemplate(tmpl string, ctx PrefixContext) string {
	return templateVar().ReplaceAllStringFunc(tmpl, func(m string) string {
		var v string
		switch strings.ToLower(m[1 : len(m)-1]) {
		case "model":
			v = ctx.Model
		case "modelfull":
			v = ctx.ModelFull
		case "provider":
			v = ctx.Provider
		case "thinkinglevel", "think":
			v = ctx.ThinkingLevel
		case "identity.name", "identityname":
			v = ctx.IdentityName
		}
		if v == "" {
			return m
		}
		return v
	})
}

var replyTag = lazyRegexp(`(?i)\[\[\s*(?:(reply_to_current)|reply_to\s*:\s*([^\]\n]*?))\s*\]\]`)

// ParseReplyTags removes every [[reply_to_current]] and [[reply_to:<id>]]
// tag from text (case-insensitive, spaces allowed inside the brackets) and
// returns the cleaned, trimmed text with the target of the first tag
// (removal repeats until no tag is left). A tag
// with an empty id is removed and ignored. Text without tags is returned
// unchanged.
func ParseReplyTags(text string) (string, ReplyTarget) {
	if !strings.Contains(text, "[[") {
		return text, ReplyTarget{}
	}
	var target ReplyTarget
	found := false
	remove := func(m string) string {
		sub := replyTag().FindStringSubmatch(m)
		if !found {
			switch {
			case sub[1] != "":
				target, found = ReplyTarget{Current: true}, true
			case strings.TrimSpace(sub[2]) != "":
				target, found = ReplyTarget{MessageID: strings.TrimSpace(sub[2])}, true
			}
		}
		return ""
	}
	// Removing a tag can splice a new one together; repeat until stable.
	out := text
	for {
		next := replyTag().ReplaceAllStringFunc(out, remove)
		if next == out {
			break
		}
		out = next
	}
	if out == text {
		return text, ReplyTarget{}
	}
	return jsTrim(out), target
}
