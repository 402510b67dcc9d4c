// Package reply normalizes the agent's reply text before delivery: it
// recognises the NO_REPLY silent token and the HEARTBEAT_OK acknowledgement,
// strips them from mixed content, applies the configured response prefix and
// extracts [[reply_to_current]] / [[reply_to:<id>]] tags into a reply target.
//
// The token helpers reproduce OpenClaw's src/auto-reply/tokens.ts and
// heartbeat.ts, and [Normalize] its normalizeReplyPayload
// (openclaw@2026.9.6), checked against the vectors produced by running
// OpenClaw.
//
// # Deliberate differences from OpenClaw
//
//   - OpenClaw's sanitizeUserFacingText (error rewriting, <final> tag
//     stripping) and LINE directive parsing are not part of this package;
//     only the internal-artifact check (box-drawing rules, harmony channel
//     markers) is applied.
//   - Reply tags are parsed out first, so "[[reply_to_current]] NO_REPLY" is
//     silent.
//   - JavaScript's /\s/ is reproduced exactly for the token patterns; the
//     reasoning-prefix heuristics use Go's ASCII \s.
//
// Everything here is pure and safe for concurrent use.
package reply

import (
	"encoding/json"
	"github.com/clawhost/clawhost/sdk/channel"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tokens the agent is instructed to use.
const (
	// SilentToken is the default token that marks a reply as intentionally
	// silent.
	SilentToken = "NO_REPLY"
	// HeartbeatToken acknowledges a heartbeat poll with nothing to report.
	HeartbeatToken = "HEARTBEAT_OK"
	// DefaultAckMaxChars is how long a heartbeat remainder may be and still
	// count as a bare acknowledgement.
	DefaultAckMaxChars = 300
)

// sp is JavaScript's \s as a character class.
const sp = `[\t\n\v\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]`

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

func jsTrimStart(s string) string { return strings.TrimLeftFunc(s, isJSSpace) }

// jsLen is String.prototype.length (UTF-16 code units).
func jsLen(s string) int { return channel.TextLen(s, channel.LengthUTF16) }

// containsFold reports whether s contains token under Unicode simple case
// folding, as the token patterns' (?i) match it: none of them can match a
// text for which this is false, and it costs a fraction of a regexp run
// (most replies have no token at all).
func containsFold(s, token string) bool {
	if token == "" {
		return true
	}
	for i := range s {
		if hasPrefixFold(s[i:], token) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	for _, p := range prefix {
		if s == "" {
			return false
		}
		r, n := utf8.DecodeRuneInString(s)
		if r != p && !foldEqual(r, p) {
			return false
		}
		s = s[n:]
	}
	return true
}

// foldEqual reports whether a and b are in one simple case-folding orbit
// (what (?i) and strings.EqualFold match).
func foldEqual(a, b rune) bool {
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

// lazyRegexp compiles expr on its first use: the package's expressions
// cost a process that never shapes a reply (the idle host, every command
// but run) nothing, where compiling them at init kept ~0.25 MB on its heap.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// tokenRegexps are the compiled patterns for one token.
type tokenRegexps struct {
	exact, trailing, leading, leadingAttached, finalToken *regexp.Regexp
}

var tokenCache sync.Map // token -> *tokenRegexps

func regexpsFor(token string) *tokenRegexps {
	if v, ok := tokenCache.Load(token); ok {
		return v.(*tokenRegexps)
	}
	t := regexp.QuoteMeta(token)
	r := &tokenRegexps{
		exact:           regexp.MustCompile(`(?i)^` + sp + `*` + t + `(?:` + sp + `+` + t + `)*` + sp + `*$`),
		trailing:        regexp.MustCompile(`(?i)(?:^|` + sp + `+|\*+)` + t + `(?:` + sp + `+` + t + `)*` + sp + `*$`),
		leading:         regexp.MustCompile(`(?i)^` + sp + `*` + t + `((?:` + sp + `*` + t + `)*)(` + sp + `*)`),
		leadingAttached: regexp.MustCompile(`(?i)^` + sp + `*(?:` + t + sp + `+)*` + t + `[\p{L}\p{N}]`),
		finalToken:      regexp.MustCompile(`(?i)(?:^|[\s*.])` + t + `\s*$`),
	}
	v, _ := tokenCache.LoadOrStore(token, r)
	return v.(*tokenRegexps)
}

func tokenOrDefault(token string) string {
	if token == "" {
		return SilentToken
	}
	return token
}

var (
	leadingPunct  = lazyRegexp(`^\p{P}+`)
	trailingPunct = lazyRegexp(`\p{P}+$`)
)

// stripEdgePunctuation removes leading and trailing Unicode punctuation
// (\p{P}; backticks are symbols, not punctuation).
func stripEdgePunctuation(s string) string {
	s = leadingPunct().ReplaceAllString(s, "")
	return trailingPunct().ReplaceAllString(s, "")
}

// IsSilentReplyText reports whether text consists only of the silent token,
// possibly repeated, case-insensitively, with surrounding whitespace and
// leading/trailing punctuation ("**NO_REPLY**", "NO_REPLY."). An empty
// token means [SilentToken].
func IsSilentReplyText(text, token string) bool {
	token = tokenOrDefault(token)
	if !containsFold(text, token) {
		return false
	}
	re := regexpsFor(token).exact
	return re.MatchString(text) || re.MatchString(stripEdgePunctuation(jsTrim(text)))
}

// IsSilentReplyPayloadText extends [IsSilentReplyText] with the JSON string
// "\"NO_REPLY\"", the JSON object {"action":"NO_REPLY"} (exactly that key),
// and a leading reasoning block (<thinking>…</thinking>, "Thinking:" line)
// followed by the token or by a stay-quiet statement and the token.
func IsSilentReplyPayloadText(text, token string) bool {
	token = tokenOrDefault(token)
	if !containsFold(text, token) { // every form below has the token
		return false
	}
	return IsSilentReplyText(text, token) ||
		isSilentJSONString(text, token) ||
		isSilentEnvelope(text, token) ||
		isReasoningPrefixedSilent(text, token)
}

func isSilentJSONString(text, token string) bool {
	t := jsTrim(text)
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' || !strings.Contains(t, token) {
		return false
	}
	var s string
	return json.Unmarshal([]byte(t), &s) == nil && jsTrim(s) == token
}

func isSilentEnvelope(text, token string) bool {
	t := jsTrim(text)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' || !strings.Contains(t, token) {
		return false
	}
	var m map[string]any
	if json.Unmarshal([]byte(t), &m) != nil || len(m) != 1 {
		return false
	}
	action, ok := m["action"].(string)
	return ok && jsTrim(action) == token
}

const reasoningTag = `(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)`

var (
	taggedReasoningPrefix = lazyRegexp(`(?i)^\s*<\s*` + reasoningTag + `\b[^<>]*>[\s\S]*?<\s*/\s*` + reasoningTag + `\s*>\s*`)
	openReasoningPrefix   = lazyRegexp(`(?i)^\s*<\s*` + reasoningTag + `\b[^<>]*>`)
	plainReasoningPrefix  = lazyRegexp(`(?i)^\s*(?:think(?:ing)?|thought|analysis|reasoning)\s*:?\s*\r?\n`)
	silentIntentText      = lazyRegexp(`(?i)^\s*(?:i|i'll|i\s+will|i'm|i\s+am|we|we'll|we\s+will|the\s+assistant|assistant|the\s+bot|bot|openclaw|clawhost)\s+(?:(?:will\s+)?(?:stay|remain|keep|be)\s+(?:quiet|silent)(?:\s+(?:here|for\s+now|on\s+this|in\s+this\s+(?:chat|thread|channel|conversation)))?|(?:do\s+not|don't|dont|will\s+not|won't|would\s+not|should\s+not)\s+(?:reply|respond)(?:\s+(?:here|for\s+now|on\s+this|in\s+this\s+(?:chat|thread|channel|conversation)))?|(?:have|has)\s+nothing\s+(?:to|for)\s+(?:say|add|reply|respond))(?:[.!?]+)?\s*$`)
	substantiveAnswerCue  = lazyRegexp(`(?i)\b(?:answer|here(?:'s|\s+is)|tell\s+them|you\s+(?:should|can|could|need|must)|please|try|use|send|service\s+is|resolved|retry|yes|no,|sure)\b`)
	bareReasoningHolder   = lazyRegexp(`(?i)^\s*(?:(?:internal|private)\s+)?(?:reasoning|thinking|thoughts?|analysis)(?:\s+notes?)?\s*$`)
	lineSplit             = lazyRegexp(`\r?\n`)
)

// stripFinalToken removes a final token preceded by start, whitespace, '*'
// or '.'; ok is false when there was none.
func stripFinalToken(text, token string) (string, bool) {
	stripped := jsTrim(regexpsFor(token).finalToken.ReplaceAllString(text, ""))
	if stripped == jsTrim(text) {
		return "", false
	}
	return stripped, true
}

func hasSilentIntentFinalToken(text, token string) bool {
	rest, ok := stripFinalToken(text, token)
	return ok && (rest == "" || silentIntentText().MatchString(rest))
}

func hasPlainReasoningFinalToken(text, token string) bool {
	rest, ok := stripFinalToken(text, token)
	if !ok {
		return false
	}
	if rest == "" || silentIntentText().MatchString(rest) {
		return true
	}
	var lines []string
	for _, l := range lineSplit().Split(rest, -1) {
		if l = jsTrim(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) >= 2 {
		final := lines[len(lines)-1]
		previous := strings.Join(lines[:len(lines)-1], "\n")
		if silentIntentText().MatchString(final) && !substantiveAnswerCue().MatchString(previous) {
			return true
		}
	}
	return bareReasoningHolder().MatchString(rest)
}

func isReasoningPrefixedSilent(text, token string) bool {
	t := jsTrim(text)
	if t == "" {
		return false
	}
	without := t
	for {
		next := taggedReasoningPrefix().ReplaceAllString(without, "")
		if next == without {
			break
		}
		without = next
	}
	if without != t {
		return IsSilentReplyText(without, token) || hasSilentIntentFinalToken(without, token)
	}
	if openReasoningPrefix().MatchString(t) {
		rest := openReasoningPrefix().ReplaceAllString(t, "")
		return IsSilentReplyText(rest, token) || hasPlainReasoningFinalToken(rest, token)
	}
	if !plainReasoningPrefix().MatchString(t) {
		return false
	}
	rest := plainReasoningPrefix().ReplaceAllString(t, "")
	return IsSilentReplyText(rest, token) || hasPlainReasoningFinalToken(rest, token)
}

// StripSilentToken removes a trailing silent token (with any repeats) that
// follows the start of the text, whitespace or '*', then trims. An empty
// result means the whole reply is silent. A token glued to a word
// ("fooNO_REPLY") or in the middle is kept.
func StripSilentToken(text, token string) string {
	re := regexpsFor(tokenOrDefault(token)).trailing
	if loc := re.FindStringIndex(text); loc != nil {
		text = text[:loc[0]]
	}
	return jsTrim(text)
}

// StripLeadingSilentToken removes one or more leading silent tokens,
// including one glued to the following text ("NO_REPLYThe user…"), then
// trims.
func StripLeadingSilentToken(text, token string) string {
	re := regexpsFor(tokenOrDefault(token)).leading
	if loc := re.FindStringIndex(text); loc != nil {
		text = text[loc[1]:]
	}
	return jsTrim(text)
}

// StartsWithSilentToken reports whether text opens with the silent token
// glued to a letter or digit ("NO_REPLYhello"), or with the token followed
// by a line break and more text. "NO_REPLY hello" on one line is false.
func StartsWithSilentToken(text, token string) bool {
	token = tokenOrDefault(token)
	if !containsFold(text, token) {
		return false
	}
	rx := regexpsFor(token)
	if rx.leadingAttached.MatchString(text) {
		return true
	}
	m := rx.leading.FindStringSubmatchIndex(text)
	if m == nil || !strings.ContainsAny(text[m[4]:m[5]], "\r\n") {
		return false
	}
	return jsTrimStart(text[m[1]:]) != ""
}

// IsSilentReplyPrefixText reports whether text looks like the start of the
// silent token still being streamed ("NO_R"): upper-case A–Z and '_' only,
// at least two characters, a prefix of the token, and containing '_' unless
// it is the bare "NO" of the default token.
func IsSilentReplyPrefixText(text, token string) bool {
	upper := strings.ToUpper(tokenOrDefault(token))
	t := jsTrimStart(text)
	if t == "" || len(t) > len(upper) || t != strings.ToUpper(t) || len(t) < 2 {
		return false
	}
	for _, r := range t {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	if !strings.HasPrefix(upper, t) {
		return false
	}
	return strings.Contains(t, "_") || (upper == SilentToken && t == "NO")
}
