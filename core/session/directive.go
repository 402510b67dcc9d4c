package session

import (
	"strings"
	"unicode"
)

// Directives are the commands that change a chat's settings (OpenClaw's
// inline directives) by their names and aliases: /model, /effort with
// OpenClaw's /think, /thinking and /t, /mode, /queue and /verbose.
var Directives = map[string]Setting{
	"model":  SettingModel,
	"effort": SettingEffort, "think": SettingEffort, "thinking": SettingEffort, "t": SettingEffort,
	"mode":    SettingMode,
	"queue":   SettingQueue,
	"verbose": SettingVerbose,
}

// SettingVerbose is /verbose (the session row's own field, not one of the
// Overrides): a directive, but not a setting Overrides.Set changes.
const SettingVerbose Setting = "verbose"

// SplitDirective cuts a message that starts with a directive and goes on
// with text ("/model opus explain this", "/think high why is the sky
// blue?") into the directive's name as typed, its argument (the first
// word) and the rest, which runs as the message. ok is false for any
// other message, for a directive alone or with only its argument (a
// directive-only message, answered without claude), and for /verbose
// whose first word is not on or off.
func SplitDirective(text string) (name, arg, rest string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", "", false
	}
	end := 1
	for end < len(t) && t[end] != ':' && !unicode.IsSpace(rune(t[end])) {
		end++
	}
	name = strings.ToLower(t[1:end])
	if _, known := Directives[name]; !known {
		return "", "", "", false
	}
	after := strings.TrimLeftFunc(strings.TrimPrefix(t[end:], ":"), unicode.IsSpace)
	i := strings.IndexFunc(after, unicode.IsSpace)
	if i < 0 {
		return "", "", "", false
	}
	arg, rest = after[:i], strings.TrimSpace(after[i:])
	if rest == "" {
		return "", "", "", false
	}
	if Directives[name] == SettingVerbose && !strings.EqualFold(arg, "on") && !strings.EqualFold(arg, "off") {
		return "", "", "", false
	}
	return name, arg, rest, true
}
