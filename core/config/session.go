package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
)

// Defaults of the session block.
const (
	DefaultDMScope = "per-channel-peer"
)

// DefaultResetTriggers are the default session.reset_triggers. It is a
// variable only because Go has no constant slices: do not modify it (Load
// gives every Config its own copy).
var DefaultResetTriggers = []string{"/new", "/reset"}

// DMScopes are the values session.dm_scope accepts; ResetModes those of the
// mode of a reset policy (besides "", which inherits); ResetTypes the labels
// of session.reset_by_type blocks.
var (
	DMScopes   = []string{"main", "per-peer", "per-channel-peer"}
	ResetModes = []string{"none", "idle", "daily"}
	ResetTypes = []string{"direct", "group", "thread"}
)

// Session is the session {} block: which conversations share a claude
// session, and when a session starts afresh.
type Session struct {
	// DMScope decides which direct messages share a session (dm_scope):
	// "main" — every direct message, from any sender on any plugin, goes to
	// one main session; "per-peer" — one session per sender, shared across
	// the instances of one plugin source (two Telegram bots), never across
	// sources unless IdentityLinks join the ids; "per-channel-peer" — one
	// session per plugin instance and sender. Groups and threads always have a session of
	// their own. Default "per-channel-peer".
	DMScope string `hcl:"dm_scope,optional"`

	// IdentityLinks join one person's ids on several plugin instances
	// (identity_links), e.g. { alice = ["tg:1001", "dc:4242"] }: with
	// dm_scope "per-peer" their direct messages share one session (a reply
	// goes to the chat the message came from).
	IdentityLinks map[string][]string `hcl:"identity_links,optional"`

	// ResetTriggers are the commands that start a new session
	// (reset_triggers): a message that is a trigger, or starts with one
	// followed by whitespace, resets the conversation's session. Each starts
	// with "/" and contains no whitespace. An empty list disables them.
	// Default ["/new", "/reset"].
	ResetTriggers []string `hcl:"reset_triggers,optional"`

	// Reset is the default reset policy (reset {}), refined per kind of
	// conversation by ResetByType and replaced per plugin instance by
	// Plugin.Reset. Nil when the block is absent, which is mode "none":
	// sessions are not reset automatically unless a reset_by_type block or
	// a plugin's reset block says so.
	Reset *ResetRule `hcl:"reset,block"`

	// ResetByType refines Reset for one kind of conversation
	// (reset_by_type "<type>" {}): "direct", "group" or "thread". At most
	// one block per type; their unset attributes inherit from Reset.
	ResetByType []*TypeReset `hcl:"reset_by_type,block"`
}

// ResetRule is a reset policy: a reset {} block in session {} or in a
// plugin block. It decides when a session is stale, so that the next
// message starts a new one. Nil pointer fields (and an empty Mode) are unset
// and inherit.
type ResetRule struct {
	// Mode is the kind of reset (mode): "none" — never; "idle" — a session
	// is stale after IdleMinutes without a message; "daily" — a session
	// started before the last AtHour:00, local time, is stale. "" (the
	// default) inherits.
	Mode string `hcl:"mode,optional"`

	// IdleMinutes is how long a session may go without a message before it
	// is stale (idle_minutes), in minutes. At least 1 when set; nil inherits.
	IdleMinutes *int `hcl:"idle_minutes,optional"`

	// AtHour is the hour of the day, local time, at which sessions of the
	// daily mode go stale (at_hour), 0 to 23. Nil inherits.
	AtHour *int `hcl:"at_hour,optional"`
}

// TypeReset is one session.reset_by_type "<type>" {} block: the reset
// policy of one kind of conversation. Its unset attributes inherit from
// session.reset.
type TypeReset struct {
	// Type is the kind of conversation, the block's label: "direct",
	// "group" or "thread".
	Type string `hcl:"type,label"`

	// Mode is as ResetRule.Mode (mode); "" inherits.
	Mode string `hcl:"mode,optional"`

	// IdleMinutes is as ResetRule.IdleMinutes (idle_minutes); nil inherits.
	IdleMinutes *int `hcl:"idle_minutes,optional"`

	// AtHour is as ResetRule.AtHour (at_hour); nil inherits.
	AtHour *int `hcl:"at_hour,optional"`
}

// Rule returns the policy of t as a ResetRule.
func (t *TypeReset) Rule() *ResetRule {
	return &ResetRule{Mode: t.Mode, IdleMinutes: t.IdleMinutes, AtHour: t.AtHour}
}

func defaultSession() *Session {
	return &Session{
		DMScope:       DefaultDMScope,
		ResetTriggers: slices.Clone(DefaultResetTriggers),
	}
}

func (s *Session) check(k *checker) {
	k.enum("dm_scope", s.DMScope, DMScopes)
	for _, person := range slices.Sorted(maps.Keys(s.IdentityLinks)) {
		k.entries("identity_links", "sender", s.IdentityLinks[person])
	}
	for i, t := range s.ResetTriggers {
		if t == "/" || !strings.HasPrefix(t, "/") || strings.ContainsFunc(t, unicode.IsSpace) {
			k.errorf(k.elemRange("reset_triggers", i, len(s.ResetTriggers)), "Invalid value for "+k.qualified("reset_triggers"),
				"%q is not a reset trigger: write a command such as \"/new\", a \"/\" followed by a word without spaces.", t)
		}
	}
	if s.Reset != nil {
		rk := k.block("reset")
		rk.where = k.qualified("reset")
		s.Reset.check(rk)
	}

	blocks := k.blocks("reset_by_type", "type")
	seen := map[string]*hcl.Block{}
	for i, t := range s.ResetByType {
		var b *hcl.Block
		if i < len(blocks) {
			b = blocks[i]
		}
		tk := k.sub(nil, fmt.Sprintf("%s %q", k.qualified("reset_by_type"), t.Type))
		var labelRange *hcl.Range
		if b != nil {
			tk.body = b.Body
			labelRange = &b.DefRange
			if len(b.LabelRanges) > 0 {
				labelRange = &b.LabelRanges[0]
			}
		}
		if !slices.Contains(ResetTypes, t.Type) {
			k.errorf(labelRange, "Invalid label for "+k.qualified("reset_by_type"),
				"%q is not one of %s.%s", t.Type, quoteList(ResetTypes), didYouMean(t.Type, ResetTypes))
		} else if first, dup := seen[t.Type]; dup {
			k.errorf(labelRange, "Duplicate "+k.qualified("reset_by_type")+" block",
				"A reset_by_type %q block is already defined at %s; write one block per type.", t.Type, pos(first.DefRange))
		} else if b != nil {
			seen[t.Type] = b
		}
		t.Rule().check(tk)
	}
}

func (r *ResetRule) check(k *checker) {
	if r.Mode != "" {
		k.enum("mode", r.Mode, ResetModes)
	}
	if r.IdleMinutes != nil {
		k.atLeast("idle_minutes", *r.IdleMinutes, 1)
	}
	if r.AtHour != nil && (*r.AtHour < 0 || *r.AtHour > 23) {
		k.errorf(k.valueRange("at_hour"), "Invalid value for "+k.qualified("at_hour"),
			"The hour of the day is 0 to 23 (local time), not %d.", *r.AtHour)
	}
}
