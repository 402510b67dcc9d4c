package sessionreset

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// DefaultTriggers are the commands that start a new session.
var DefaultTriggers = []string{"/new", "/reset"}

// TriggerOptions configure [MatchTrigger].
type TriggerOptions struct {
	// Triggers defaults to DefaultTriggers. Matching is case-insensitive.
	Triggers []string
	// Authorized must be true: only authorized senders may reset.
	Authorized bool
	// BotUsername is this bot's username; "/new@<BotUsername>" matches,
	// "/new@<other>" does not.
	BotUsername string
}

// TriggerMatch is the result of [MatchTrigger].
type TriggerMatch struct {
	// Triggered is true when the message resets the session.
	Triggered bool
	// Trigger is the matched trigger, as configured.
	Trigger string
	// Payload is the text after the trigger, leading whitespace removed; it
	// becomes the first message of the new session ("" for a bare trigger).
	Payload string
	// SoftReset is true for "/reset soft", which is not a trigger.
	SoftReset bool
}

var leadingHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[[^\]\n]*\]\s*`) })

// MatchTrigger reports whether body is a reset trigger. Leading whitespace
// and leading envelope headers ("[Telegram Alice ...] ") are skipped. The
// body must equal a trigger or continue it with whitespace, ':' (the colon
// form "/new: hi") or "@<bot>"; "/newest" and "please /new" do not match.
// "/reset soft" reports SoftReset instead. Unauthorized senders never match.
func MatchTrigger(body string, opts TriggerOptions) TriggerMatch {
	if !opts.Authorized {
		return TriggerMatch{}
	}
	text := strings.TrimLeftFunc(body, unicode.IsSpace)
	// The pattern starts with "[": most messages skip the regexp.
	for strings.HasPrefix(text, "[") {
		loc := leadingHeader().FindStringIndex(text)
		if loc == nil {
			break
		}
		text = text[loc[1]:]
	}
	triggers := opts.Triggers
	if len(triggers) == 0 {
		triggers = DefaultTriggers
	}
	// The triggers the text starts with (most messages: none, and then
	// nothing is sorted), longest first, so "/reset all" wins over
	// "/reset" when both exist.
	var sorted []string
	for _, trig := range triggers {
		if t := strings.TrimSpace(trig); t != "" && len(text) >= len(t) && strings.EqualFold(text[:len(t)], t) {
			sorted = append(sorted, trig)
		}
	}
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, trig := range sorted {
		t := strings.TrimSpace(trig)
		rest := text[len(t):]
		if strings.HasPrefix(rest, "@") {
			name := rest[1:]
			end := strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || r == ':' })
			if end < 0 {
				end = len(name)
			}
			if opts.BotUsername == "" || !strings.EqualFold(name[:end], strings.TrimPrefix(opts.BotUsername, "@")) {
				return TriggerMatch{}
			}
			rest = name[end:]
		}
		switch {
		case rest == "":
		case rest[0] == ':':
			rest = rest[1:]
		case strings.IndexFunc(rest, unicode.IsSpace) == 0:
		default:
			continue // "/newest"
		}
		payload := strings.TrimLeftFunc(rest, unicode.IsSpace)
		if strings.EqualFold(t, "/reset") && isSoft(payload) {
			return TriggerMatch{SoftReset: true}
		}
		return TriggerMatch{Triggered: true, Trigger: trig, Payload: strings.TrimRightFunc(payload, unicode.IsSpace)}
	}
	return TriggerMatch{}
}

func isSoft(payload string) bool {
	word, _, _ := strings.Cut(strings.ToLower(payload), " ")
	return strings.TrimSpace(word) == "soft"
}
