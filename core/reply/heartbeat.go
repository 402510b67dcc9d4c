package reply

import (
	"regexp"
	"strings"
)

// HeartbeatMode says how a heartbeat remainder is judged.
type HeartbeatMode string

const (
	// ModeMessage treats any remaining text as a message to deliver. It is
	// the default.
	ModeMessage HeartbeatMode = "message"
	// ModeHeartbeat treats a remainder of at most MaxAckChars as part of the
	// acknowledgement and skips it.
	ModeHeartbeat HeartbeatMode = "heartbeat"
)

// HeartbeatOptions configures [StripHeartbeatToken].
type HeartbeatOptions struct {
	// Mode defaults to ModeMessage.
	Mode HeartbeatMode
	// MaxAckChars bounds an acknowledgement remainder in ModeHeartbeat, in
	// UTF-16 code units. nil means DefaultAckMaxChars; negative means 0.
	MaxAckChars *int
}

// HeartbeatResult is the outcome of [StripHeartbeatToken].
type HeartbeatResult struct {
	// ShouldSkip is true when nothing should be delivered.
	ShouldSkip bool
	// Text is what remains to deliver.
	Text string
	// DidStrip is true when a token was removed.
	DidStrip bool
}

var (
	htmlTag       = lazyRegexp(`<[^>]*>`)
	nbsp          = lazyRegexp(`(?i)&nbsp;`)
	leadingMarkup = lazyRegexp("^[*`~_]+")
	trailMarkup   = lazyRegexp("[*`~_]+$")
	tokenAtEnd    = lazyRegexp(regexp.QuoteMeta(HeartbeatToken) + `[^\w]{0,4}$`)
	spaceRun      = lazyRegexp(sp + `+`)
)

// StripHeartbeatToken removes HEARTBEAT_OK from the edges of raw (OpenClaw's
// stripHeartbeatToken). The token is stripped repeatedly from the start and
// from the end (where up to four trailing non-word characters are kept and
// glued back); whitespace in the rest collapses to single spaces. A copy with
// HTML tags and edge markdown markers removed is tried too; the original is
// preferred when it stripped something and left text. A token in the middle
// is left alone.
func StripHeartbeatToken(raw string, opts HeartbeatOptions) HeartbeatResult {
	trimmed := jsTrim(raw)
	if trimmed == "" {
		return HeartbeatResult{ShouldSkip: true}
	}
	maxAck := DefaultAckMaxChars
	if opts.MaxAckChars != nil {
		maxAck = max(0, *opts.MaxAckChars)
	}
	normalized := htmlTag().ReplaceAllString(trimmed, " ")
	normalized = nbsp().ReplaceAllString(normalized, " ")
	normalized = leadingMarkup().ReplaceAllString(normalized, "")
	normalized = trailMarkup().ReplaceAllString(normalized, "")
	if !strings.Contains(trimmed, HeartbeatToken) && !strings.Contains(normalized, HeartbeatToken) {
		return HeartbeatResult{Text: trimmed}
	}
	text, did := stripTokenAtEdges(trimmed)
	if !did || text == "" {
		text, did = stripTokenAtEdges(normalized)
	}
	if !did {
		return HeartbeatResult{Text: trimmed}
	}
	if text == "" {
		return HeartbeatResult{ShouldSkip: true, DidStrip: true}
	}
	rest := jsTrim(text)
	if opts.Mode == ModeHeartbeat && jsLen(rest) <= maxAck {
		return HeartbeatResult{ShouldSkip: true, DidStrip: true}
	}
	return HeartbeatResult{Text: rest, DidStrip: true}
}

func stripTokenAtEdges(raw string) (string, bool) {
	text := jsTrim(raw)
	if text == "" || !strings.Contains(text, HeartbeatToken) {
		return text, false
	}
	did := false
	for changed := true; changed; {
		changed = false
		next := jsTrim(text)
		if strings.HasPrefix(next, HeartbeatToken) {
			text = jsTrimStart(next[len(HeartbeatToken):])
			did, changed = true, true
			continue
		}
		if tokenAtEnd().MatchString(next) {
			idx := strings.LastIndex(next, HeartbeatToken)
			text = strings.TrimRightFunc(strings.TrimRightFunc(next[:idx], isJSSpace)+next[idx+len(HeartbeatToken):], isJSSpace)
			did, changed = true, true
		}
	}
	return jsTrim(spaceRun().ReplaceAllString(text, " ")), did
}
