package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Defaults of the access block.
const (
	DefaultDMPolicy    = "pairing"
	DefaultGroupPolicy = "allowlist"
)

// DMPolicies are the values access.dm_policy accepts; GroupPolicies those of
// access.group_policy.
var (
	DMPolicies    = []string{"pairing", "allowlist", "open"}
	GroupPolicies = []string{"allowlist", "open", "disabled"}
)

// Access is the access {} block: who may talk to the agent.
//
// Senders and groups are written "<instance>:<id>": the plugin instance name
// (the label of a plugin block) and the platform's id, e.g. "tg:1001" for
// Telegram user 1001 on plugin "tg"; "<instance>:*" stands for every sender
// (or group) of that instance. Load checks the form and that the instance
// exists (disabled plugins count), not the id.
type Access struct {
	// Owners may use owner-only commands and are always allowed in direct
	// messages (owners).
	Owners []string `hcl:"owners,optional"`

	// DMPolicy decides who may talk in direct messages (dm_policy):
	// "pairing" — unknown senders get a pairing code an owner approves;
	// "allowlist" — only Owners and AllowFrom (senders approved through
	// pairing are not honoured, though their approvals are kept: switching
	// back honours them again; the start logs how many are set aside);
	// "open" — anyone. Default "pairing".
	DMPolicy string `hcl:"dm_policy,optional"`

	// AllowFrom are senders allowed in direct messages besides the owners
	// (allow_from); in allowed groups they trigger the agent too.
	AllowFrom []string `hcl:"allow_from,optional"`

	// PairingTTL is how long an approval through pairing lasts
	// (pairing_ttl), e.g. "30d"; after it the sender is asked to pair
	// again. Empty or "0s" (the default): approvals do not expire; they
	// last until revoked (`clawhost pairing revoke`, /revoke).
	PairingTTL Duration `hcl:"pairing_ttl,optional"`

	// GroupPolicy decides which groups the agent answers in (group_policy):
	// "allowlist" — only Groups; "open" — every group the bot is in;
	// "disabled" — none. Default "allowlist".
	GroupPolicy string `hcl:"group_policy,optional"`

	// Rate is the flood limit of each sender (rate): "20/min" lets a
	// sender's messages through at 20 a minute (a burst of up to 20, then
	// one every 3 s); the rest are refused, recorded, and the sender told
	// once a window. The unit is /s, /min, /hour or /day. Empty (the
	// default): no limit.
	Rate Rate `hcl:"rate,optional"`

	// Groups are the allowed groups, "<instance>:<group id>" (groups).
	Groups []string `hcl:"groups,optional"`

	// GroupAllowFrom are senders who may trigger the agent in allowed
	// groups (group_allow_from, OpenClaw's name), besides the owners,
	// Members and AllowFrom. Everyone else's messages are kept as the
	// group's context only, marked untrusted in the prompt. A group open
	// to every member is written explicitly: group_allow_from = ["tg:*"].
	// Empty (the default): only the senders named elsewhere trigger it.
	GroupAllowFrom []string `hcl:"group_allow_from,optional"`

	// Members trigger the agent in groups and control group sessions like
	// owners — /new, /stop, the costs in /status, /model and the other
	// per-chat settings — without the owner-only commands (/approve,
	// /revoke, /schedule) (members). Whoever may trigger the agent in a
	// group may control its session; nobody else may.
	Members []string `hcl:"members,optional"`

	// GroupRules are group "<instance>:<group id>" {} blocks: rules for one
	// group, which they also allow (group).
	GroupRules []*GroupRule `hcl:"group,block"`

	// RequireMention makes the agent answer in groups only when mentioned,
	// replied to, or addressed with a trigger word (require_mention); one
	// of the bot's commands (/usage) is addressed to it without a mention.
	// Default true.
	RequireMention bool `hcl:"require_mention,optional"`

	// TriggerWords count as a mention in groups (trigger_words), matched as
	// whole words, case-insensitively.
	TriggerWords []string `hcl:"trigger_words,optional"`
}

// GroupRule is an access group "<id>" {} block.
type GroupRule struct {
	// ID is the group, "<instance>:<group id>".
	ID string `hcl:"id,label"`
	// AllowFrom replaces group_allow_from in this group (allow_from).
	AllowFrom []string `hcl:"allow_from,optional"`
	// Members add to access.members in this group (members).
	Members []string `hcl:"members,optional"`
	// RequireMention replaces require_mention in this group
	// (require_mention).
	RequireMention *bool `hcl:"require_mention,optional"`
}

func defaultAccess() *Access {
	return &Access{DMPolicy: DefaultDMPolicy, GroupPolicy: DefaultGroupPolicy, RequireMention: true}
}

func (a *Access) check(k *checker) {
	k.enum("dm_policy", a.DMPolicy, DMPolicies)
	k.optionalDuration("pairing_ttl", a.PairingTTL)
	k.enum("group_policy", a.GroupPolicy, GroupPolicies)
	k.rate("rate", a.Rate)
	k.entries("owners", "sender", a.Owners)
	k.entries("allow_from", "sender", a.AllowFrom)
	k.entries("groups", "group", a.Groups)
	k.entries("group_allow_from", "sender", a.GroupAllowFrom)
	k.entries("members", "sender", a.Members)
	blocks := k.blocks("group", "id")
	for i, g := range a.GroupRules {
		gk := k.sub(nil, fmt.Sprintf("access.group %q", g.ID))
		if i < len(blocks) {
			gk.body = blocks[i].Body
		}
		var labelRange *hcl.Range
		if i < len(blocks) && len(blocks[i].LabelRanges) > 0 {
			labelRange = &blocks[i].LabelRanges[0]
		}
		if instance, _, ok := SplitEntry(g.ID); !ok || !slices.Contains(k.cfg.instanceNames(), instance) {
			k.errorf(labelRange, "Invalid group in access.group",
				"%q is not \"<instance>:<group id>\" with a defined plugin instance, e.g. %q.", g.ID, exampleEntry(k.cfg.instanceNames()))
		}
		gk.entries("allow_from", "sender", g.AllowFrom)
		gk.entries("members", "sender", g.Members)
	}
	for i, w := range a.TriggerWords {
		if strings.TrimSpace(w) == "" {
			k.errorf(k.elemRange("trigger_words", i, len(a.TriggerWords)), "Invalid value for access.trigger_words",
				"A trigger word must not be empty.")
		}
	}
	a.checkNamed(k, blocks)
}

// checkNamed warns where groups can reach the agent but no sender is named
// who could trigger it there: then every message of those groups is
// context only, which is rarely what the operator meant.
func (a *Access) checkNamed(k *checker, blocks []*hcl.Block) {
	named := func(instance string, lists ...[]string) bool {
		for _, l := range append([][]string{a.Owners, a.Members, a.AllowFrom}, lists...) {
			for _, e := range l {
				if inst, _, ok := SplitEntry(e); ok && inst == instance {
					return true
				}
			}
		}
		return false
	}
	const summary = "No sender may trigger the agent in this group"
	detail := func(instance, list, attr string) string {
		return fmt.Sprintf("In a group only owners, members, allow_from and %s trigger the agent; none names a sender of instance %q, "+
			"so messages there are context only. Name the senders, or open the group to every member with %s = [\"%s:*\"].",
			list, instance, attr, instance)
	}
	known := k.cfg.instanceNames()
	switch a.GroupPolicy {
	case "disabled":
		return
	case "open":
		var unnamed []string
		for _, p := range known {
			if !named(p, a.GroupAllowFrom) {
				unnamed = append(unnamed, p)
			}
		}
		if len(unnamed) > 0 {
			k.emit(warning(k.valueRange("group_policy"), summary,
				detail(unnamed[0], "group_allow_from", "group_allow_from")+fmt.Sprintf(" (Instances without a named sender: %s.)", strings.Join(unnamed, ", "))))
		}
		return
	}
	for i, g := range a.Groups {
		if instance, _, ok := SplitEntry(g); ok && slices.Contains(known, instance) && !named(instance, a.GroupAllowFrom) {
			k.emit(warning(k.elemRange("groups", i, len(a.Groups)), summary, detail(instance, "group_allow_from", "group_allow_from")))
		}
	}
	for i, g := range a.GroupRules {
		instance, _, ok := SplitEntry(g.ID)
		allow := a.GroupAllowFrom
		if len(g.AllowFrom) > 0 {
			allow = g.AllowFrom
		}
		if !ok || !slices.Contains(known, instance) || named(instance, allow, g.Members) {
			continue
		}
		var subject *hcl.Range
		if i < len(blocks) && len(blocks[i].LabelRanges) > 0 {
			subject = &blocks[i].LabelRanges[0]
		}
		k.emit(warning(subject, summary, detail(instance, "the block's allow_from (else group_allow_from)", "allow_from")))
	}
}

// SplitEntry splits an access entry "<instance>:<id>" at its first colon.
// ok is false when either part is empty.
func SplitEntry(entry string) (instance, id string, ok bool) {
	instance, id, found := strings.Cut(entry, ":")
	return instance, id, found && instance != "" && id != ""
}

// entries checks a list of "<instance>:<id>" entries and records their
// ids for NormalizeIDs.
func (k *checker) entries(name, what string, list []string) {
	for i, e := range list {
		k.entry(name, what, e, k.elemRange(name, i, len(list)), func(canon string) { list[i] = canon })
	}
}

// entry checks one "<instance>:<id>" entry e at r; set keeps it in its
// canonical form (NormalizeIDs).
func (k *checker) entry(name, what, e string, r *hcl.Range, set func(string)) {
	instances := k.cfg.instanceNames()
	instance, id, ok := SplitEntry(e)
	if !ok {
		k.errorf(r, "Invalid entry in "+k.qualified(name),
			"%q is not \"<instance>:<%s id>\": write the plugin instance name, a colon and the %s's platform id, e.g. %q.",
			e, what, what, exampleEntry(instances))
		return
	}
	if !slices.Contains(instances, instance) {
		k.errorf(r, "Unknown plugin instance in "+k.qualified(name),
			"%q names plugin instance %q, but no plugin %q block is defined.%s",
			e, instance, instance, didYouMean(instance, instances))
		return
	}
	k.cfg.addIDRef(idRef{instance: instance, id: id, entry: e, summary: "Entry never matches in " + k.qualified(name), what: what, subject: r,
		set: func(canon string) { set(instance + ":" + canon) }})
}

func exampleEntry(instances []string) string {
	if len(instances) > 0 {
		return instances[0] + ":1001"
	}
	return "tg:1001"
}

// instanceNames lists the plugin instance names, in file order.
func (c *Config) instanceNames() []string {
	names := make([]string, 0, len(c.Plugins))
	for _, p := range c.Plugins {
		names = append(names, p.Name)
	}
	return names
}
