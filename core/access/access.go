// Package access decides who may reach the agent: the direct-message policy
// (pairing, allowlist, open), owners, the group policy and mention gating.
// It is the pipeline's stage right after the journal; a message it does not
// admit never reaches debounce, commands or the agent.
package access

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/clawhost/clawhost/core/message"
)

// Policy decides who may reach the agent. It is safer than OpenClaw's
// defaults on purpose: direct messages default to pairing (OpenClaw: open
// for paired platforms), groups must be listed (group_policy "allowlist")
// and require a mention by default.
type Policy struct {
	// DMPolicy is "pairing" (default), "allowlist" or "open". Approvals
	// through pairing count only under "pairing".
	DMPolicy string
	// Owners, AllowFrom and Groups hold "<instance>:<id>" entries;
	// "<instance>:*" admits every sender (group) of the instance.
	Owners    []string
	AllowFrom []string
	// GroupPolicy is "allowlist" (default), "open" or "disabled".
	GroupPolicy string
	Groups      []string
	// GroupAllowFrom are senders whose messages trigger the agent in
	// groups, besides the owners, Members and AllowFrom; everyone else's
	// are Unaddressed (kept as context). "<instance>:*" opens a group to
	// every member.
	GroupAllowFrom []string
	// Members trigger the agent in groups and control group sessions
	// (reset, stop, costs, per-chat settings) like owners, without the
	// owner-only commands.
	Members []string
	// GroupRules are per-group rules by "<instance>:<group id>"; a group
	// with rules is allowed.
	GroupRules map[string]GroupRule
	// PairingTTL, when positive, is how long an approval through pairing
	// counts (the caller's approved lookup applies it).
	PairingTTL time.Duration
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

// Verdict is what access control decided for a message.
type Verdict int

// Verdicts.
const (
	// Admit: the message goes on through the pipeline.
	Admit Verdict = iota
	// Refuse: an unknown direct sender under the allowlist policy.
	Refuse
	// Pair: an unknown direct sender under the pairing policy.
	Pair
	// IgnoreGroup: a group that is not allowed.
	IgnoreGroup
	// Unaddressed: an allowed group, but the bot was not addressed; the
	// message is kept as group history.
	Unaddressed
)

func listed(list []string, instance, id string) bool {
	for _, e := range list {
		if e == instance+":"+id || e == instance+":*" {
			return true
		}
	}
	return false
}

// senderListed reports whether the sender of m is in list under its id or
// one of its alternate ids (a WhatsApp phone number or LID).
func senderListed(list []string, m *message.Message) bool {
	for _, id := range m.SenderIDs() {
		if listed(list, m.Instance, id) {
			return true
		}
	}
	return false
}

// IsOwner reports whether the sender of m is an owner, under its id or one
// of its alternate ids.
func (a *Policy) IsOwner(m *message.Message) bool {
	for _, e := range a.Owners {
		if e == m.From {
			return true
		}
		for _, id := range m.Sender.AltIDs {
			if e == m.Instance+":"+id {
				return true
			}
		}
	}
	return false
}

// IsMember reports whether the sender of m is a member: one of Members, or
// of the members of m's group block. Owners are not counted.
func (a *Policy) IsMember(m *message.Message) bool {
	r, _ := a.rule(m)
	return senderListed(a.Members, m) || senderListed(r.Members, m)
}

// GroupRule is what one group changes (access.group "<id>" {}).
type GroupRule struct {
	// AllowFrom, when set, replaces GroupAllowFrom in this group.
	AllowFrom []string
	// Members add to Members in this group.
	Members []string
	// RequireMention, when set, replaces RequireMention in this group.
	RequireMention *bool
}

// rule is m's group rule, if any.
func (a *Policy) rule(m *message.Message) (GroupRule, bool) {
	r, ok := a.GroupRules[m.Instance+":"+m.ChatID]
	return r, ok
}

// mayTrigger reports whether the sender of group message m is one the
// operator named: an owner, a member (access.members or the group block's
// members), a sender allow_from lists, or one group_allow_from lists (the
// group block's allow_from replacing it there). A group open to every
// member is written explicitly, group_allow_from = ["tg:*"]; approvals
// through pairing count in direct messages only.
func (a *Policy) mayTrigger(m *message.Message) bool {
	r, _ := a.rule(m)
	allow := a.GroupAllowFrom
	if len(r.AllowFrom) > 0 {
		allow = r.AllowFrom
	}
	return a.IsOwner(m) || senderListed(a.Members, m) || senderListed(r.Members, m) ||
		senderListed(a.AllowFrom, m) || senderListed(allow, m)
}

// MayTrigger reports whether the sender of m may start a turn in m's chat
// (their group messages are not only context): in a direct chat anyone
// admitted, in a group those [Policy.Decide] names.
func (a *Policy) MayTrigger(m *message.Message) bool {
	return !m.IsGroup() || a.mayTrigger(m)
}

// MayControl reports whether the sender of m may control the session of
// the chat m came from: start it anew (/new, a reset trigger), stop it
// (/stop, an abort word) and see its costs in /status. In a direct chat the
// session is the sender's own; in a group only the senders the operator
// named may (owners, members, allow_from, group_allow_from or the group's
// allow_from) — the same who may trigger the agent there. Nobody named
// means nobody controls a group session.
func (a *Policy) MayControl(m *message.Message) bool { return a.MayTrigger(m) }

// RequiresMention reports whether the agent answers in m's group only when
// mentioned (require_mention, or the group's own rule).
func (a *Policy) RequiresMention(m *message.Message) bool {
	if r, ok := a.rule(m); ok && r.RequireMention != nil {
		return *r.RequireMention
	}
	return a.RequireMention
}

// Decide applies the policy; approved reports whether an owner approved
// the sender through pairing (it is consulted last, it reads the store,
// and only under the pairing policy: switching to "allowlist" stops
// honouring approvals without deleting them). In an allowed group, a
// message triggers the agent only when addressed (require_mention) and
// from a sender the operator named (see [Policy.MayControl]); any other
// is Unaddressed, kept as context the prompt marks untrusted.
func (a *Policy) Decide(ctx context.Context, m *message.Message, approved func(context.Context, string, string) bool) Verdict {
	if m.IsGroup() {
		r, hasRule := a.rule(m)
		switch a.GroupPolicy {
		case PolicyOpen:
		case PolicyDisabled:
			return IgnoreGroup
		default:
			if !hasRule && !listed(a.Groups, m.Instance, m.ChatID) {
				return IgnoreGroup
			}
		}
		mention := a.RequireMention
		if r.RequireMention != nil {
			mention = *r.RequireMention
		}
		if mention && !m.WasMentioned && !a.triggered(m.Body) {
			return Unaddressed
		}
		if !a.mayTrigger(m) {
			return Unaddressed
		}
		return Admit
	}
	if a.DMPolicy == PolicyOpen || a.IsOwner(m) || senderListed(a.AllowFrom, m) {
		return Admit
	}
	if approved != nil && a.DMPolicy != PolicyAllowlist {
		for _, id := range m.SenderIDs() {
			if approved(ctx, m.Instance, id) {
				return Admit
			}
		}
	}
	if a.DMPolicy == PolicyAllowlist {
		return Refuse
	}
	return Pair
}

// triggered reports whether text contains a trigger word as a whole word,
// ignoring case.
func (a *Policy) triggered(text string) bool {
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

// Refusals limits refusal notices: at most one per sender per Window, so a
// stranger cannot make the bot talk in a loop. The zero value is not
// usable; call NewRefusals.
type Refusals struct {
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	last map[string]time.Time
}

// maxRefused bounds the senders remembered; beyond it the memory is reset
// (a stranger may then get a second notice early).
const maxRefused = 10000

// NewRefusals returns a limiter with one notice per sender per window;
// now is the clock (nil means time.Now).
func NewRefusals(window time.Duration, now func() time.Time) *Refusals {
	if now == nil {
		now = time.Now
	}
	return &Refusals{window: window, now: now, last: map[string]time.Time{}}
}

// Allow reports whether a refusal may be sent to sender now, and records it.
func (r *Refusals) Allow(sender string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if t, ok := r.last[sender]; ok && now.Sub(t) < r.window {
		return false
	}
	if len(r.last) > maxRefused {
		r.last = map[string]time.Time{}
	}
	r.last[sender] = now
	return true
}
