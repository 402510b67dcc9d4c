package gateway

import (
	"context"
	"strings"
	"unicode"
)

// Access decides who may reach the agent. It is safer than OpenClaw's
// defaults on purpose: direct messages default to pairing (OpenClaw: open
// for paired platforms), groups must be listed (group_policy "allowlist")
// and require a mention by default.
type Access struct {
	// DMPolicy is "pairing" (default), "allowlist" or "open".
	DMPolicy string
	// Owners, AllowFrom and Groups hold "<instance>:<id>" entries;
	// "<instance>:*" admits every sender (group) of the instance.
	Owners    []string
	AllowFrom []string
	// GroupPolicy is "allowlist" (default), "open" or "disabled".
	GroupPolicy string
	Groups      []string
	// RequireMention: in groups the agent answers only when mentioned,
	// replied to, or addressed with one of TriggerWords.
	RequireMention bool
	TriggerWords   []string
}

// Access policies.
const (
	PolicyPairing   = "pairing"
	PolicyAllowlist = "allowlist"
	PolicyOpen      = "open"
	PolicyDisabled  = "disabled"
)

// verdict is what access control decided for a message.
type verdict int

const (
	// admit: the message goes on through the pipeline.
	admit verdict = iota
	// refuse: an unknown direct sender under the allowlist policy.
	refuse
	// pair: an unknown direct sender under the pairing policy.
	pair
	// ignoreGroup: a group that is not allowed.
	ignoreGroup
	// unaddressed: an allowed group, but the bot was not addressed; the
	// message is kept as group history.
	unaddressed
)

func listed(list []string, instance, id string) bool {
	for _, e := range list {
		if e == instance+":"+id || e == instance+":*" {
			return true
		}
	}
	return false
}

// IsOwner reports whether the sender of m is an owner.
func (a *Access) IsOwner(m *Message) bool {
	for _, e := range a.Owners {
		if e == m.From {
			return true
		}
	}
	return false
}

// decide applies the policy; approved reports whether an owner approved
// the sender through pairing (it is consulted last, it reads the store).
func (a *Access) decide(ctx context.Context, m *Message, approved func(context.Context, string, string) bool) verdict {
	if m.IsGroup() {
		switch a.GroupPolicy {
		case PolicyOpen:
		case PolicyDisabled:
			return ignoreGroup
		default:
			if !listed(a.Groups, m.Instance, m.ChatID) {
				return ignoreGroup
			}
		}
		if a.RequireMention && !m.WasMentioned && !a.triggered(m.Body) {
			return unaddressed
		}
		return admit
	}
	if a.DMPolicy == PolicyOpen || a.IsOwner(m) || listed(a.AllowFrom, m.Instance, m.Sender.ID) {
		return admit
	}
	if approved != nil && approved(ctx, m.Instance, m.Sender.ID) {
		return admit
	}
	if a.DMPolicy == PolicyAllowlist {
		return refuse
	}
	return pair
}

// triggered reports whether text contains a trigger word as a whole word,
// ignoring case.
func (a *Access) triggered(text string) bool {
	if len(a.TriggerWords) == 0 {
		return false
	}
	lower := strings.ToLower(text)
	for _, w := range a.TriggerWords {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		for from := 0; ; {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			i += from
			end := i + len(w)
			if boundary(lower, i-1) && boundary(lower, end) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// boundary reports whether position i of s is outside s or not a letter,
// digit or underscore.
func boundary(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	r := rune(s[i])
	if r >= 0x80 {
		// Inside a multi-byte rune: judge by the rune that starts there.
		for _, rr := range s[i:] {
			r = rr
			break
		}
	}
	return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}
