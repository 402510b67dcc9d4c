package config

import (
	"regexp"
	"strings"
)

// The id forms people write for one sender or chat, per platform (the
// plugin's source): an entry in owners, allow_from, members, groups or an
// agent's chats is rewritten to the form the plugin reports, so every form
// matches, and one that no message can ever carry is reported.
var (
	waPhoneRe    = regexp.MustCompile(`^\+?([0-9]{5,20})(@s\.whatsapp\.net)?$`)
	waJIDRe      = regexp.MustCompile(`^[0-9]+(-[0-9]+)?@(lid|g\.us)$`)
	telegramIDRe = regexp.MustCompile(`^-?[0-9]+$`)
	discordIDRe  = regexp.MustCompile(`^(?:<(?:@!?|#)([0-9]+)>|([0-9]+))$`)
)

// CanonicalID returns the id a plugin of the given source reports for what
// an operator wrote as id, and whether any message can carry it. A
// WhatsApp person is "+<number>" however written (15551234567,
// +15551234567, 15551234567@s.whatsapp.net), a LID or group keeps its JID;
// a Discord mention (<@123>, <@!123>, <#123>) is its id. "*" and ids of
// other platforms are kept as written.
func CanonicalID(source, id string) (string, bool) {
	if id == "*" {
		return id, true
	}
	switch source {
	case "whatsapp":
		if m := waPhoneRe.FindStringSubmatch(id); m != nil {
			return "+" + m[1], true
		}
		return id, waJIDRe.MatchString(id)
	case "telegram":
		return id, telegramIDRe.MatchString(id)
	case "discord":
		if m := discordIDRe.FindStringSubmatch(id); m != nil {
			return m[1] + m[2], true
		}
		return id, false
	}
	return id, true
}

// idHint says what ids of a source look like, for the warning about one
// that never matches.
func idHint(source string) string {
	switch source {
	case "whatsapp":
		return "a WhatsApp person is a phone number with its country code (+15551234567), a group its JID (…@g.us)"
	case "telegram":
		return "Telegram ids are numbers (a group's is negative), never @usernames: /whoami tells a sender their id"
	case "discord":
		return "Discord ids are numbers (snowflakes): turn on Developer Mode and use Copy ID, or /whoami"
	}
	return ""
}

// canonicalEntry rewrites "<instance>:<id>" to the plugin's id form and
// reports whether the id can ever match.
func (c *Config) canonicalEntry(entry string) (string, bool) {
	instance, id, ok := SplitEntry(entry)
	p := c.Plugin(instance)
	if !ok || p == nil {
		return entry, true
	}
	canon, matches := CanonicalID(p.Source, id)
	return instance + ":" + canon, matches
}

// sourceOf is the plugin source of an entry's instance, "" when unknown.
func (c *Config) sourceOf(entry string) string {
	instance, _, _ := strings.Cut(entry, ":")
	if p := c.Plugin(instance); p != nil {
		return p.Source
	}
	return ""
}
