// Package command recognises chat control commands ("/status", "/new",
// "stop") in inbound text, so the pipeline can route them around the agent
// and past the debouncer.
//
// It reproduces OpenClaw's command-detection.ts (openclaw@2026.9.6) for the
// built-in command set, checked against the vectors produced by running
// OpenClaw. A command is recognised only at the start of the message:
// "/name", optionally followed by ':' or whitespace and arguments,
// case-insensitive. "/status@somebot" is not a control command here (bot
// mentions are resolved by the channel adapter before detection).
//
// The command list is clawhost's registry of built-ins; [Set] lets callers
// add plugin commands. All functions are pure.
package command

import (
	"regexp"
	"strings"
	"unicode"
)

// Builtins are the control commands clawhost handles itself.
var Builtins = []string{
	"help", "commands", "status", "whoami", "id", "context", "stop", "restart",
	"new", "reset", "compact", "think", "thinking", "t", "verbose", "v",
	"reasoning", "reason", "elevated", "elev", "model", "models", "queue",
	"usage", "activation", "send", "config", "debug",
}

// AbortWords stop the active run when sent as a whole message.
var AbortWords = []string{"stop", "esc", "abort", "interrupt", "halt", "exit"}

// Set is a set of command names (without the slash, lower case).
type Set map[string]bool

// NewSet builds a Set from names; a leading '/' is ignored.
func NewSet(names ...string) Set {
	s := make(Set, len(names))
	for _, n := range names {
		s[strings.ToLower(strings.TrimPrefix(strings.TrimSpace(n), "/"))] = true
	}
	return s
}

// Default is the Set of [Builtins].
var Default = NewSet(Builtins...)

// Parse splits a message that starts with a command in s into the command
// name (lower case) and its arguments (trimmed). ok is false when the
// message does not start with a known command.
func (s Set) Parse(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	end := 1
	for end < len(t) && t[end] != ':' && !unicode.IsSpace(rune(t[end])) {
		end++
	}
	name = strings.ToLower(t[1:end])
	if !s[name] {
		return "", "", false
	}
	rest := t[end:]
	rest = strings.TrimPrefix(rest, ":")
	return name, strings.TrimSpace(rest), true
}

// Has reports whether text starts with a command in s.
func (s Set) Has(text string) bool {
	_, _, ok := s.Parse(text)
	return ok
}

// HasControlCommand reports whether text starts with a built-in command
// (OpenClaw's hasControlCommand).
func HasControlCommand(text string) bool { return Default.Has(text) }

// IsAbortTrigger reports whether the whole message is an abort word
// ("stop", "esc", "abort", …), ignoring case, surrounding whitespace and
// trailing punctuation.
func IsAbortTrigger(text string) bool {
	t := strings.ToLower(strings.TrimRightFunc(strings.TrimSpace(text), unicode.IsPunct))
	for _, w := range AbortWords {
		if t == w {
			return true
		}
	}
	return false
}

// IsControlCommandMessage reports whether the message is handled by the
// gateway rather than the agent: a built-in command or an abort word
// (OpenClaw's isControlCommandMessage).
func IsControlCommandMessage(text string) bool {
	return HasControlCommand(text) || IsAbortTrigger(text)
}

// IsSessionBoundary reports whether the message ends the current session:
// /new or /reset with or without arguments, except "/reset soft" (OpenClaw's
// isSessionBoundaryCommandText).
func IsSessionBoundary(text string) bool {
	name, args, ok := Default.Parse(text)
	if !ok || (name != "new" && name != "reset") {
		return false
	}
	first, _, _ := strings.Cut(strings.ToLower(args), " ")
	return !(name == "reset" && first == "soft")
}

var inlineToken = regexp.MustCompile(`(?i)(?:^|\s)[/!][a-z]`)

// HasInlineCommandTokens reports whether the text contains something that
// looks like a command anywhere, "/word" or "!word" at the start or after
// whitespace (OpenClaw's hasInlineCommandTokens). URL paths do not count.
func HasInlineCommandTokens(text string) bool { return inlineToken.MatchString(text) }
