package config

import (
	"slices"
	"strings"
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
	// "allowlist" — only Owners and AllowFrom; "open" — anyone.
	// Default "pairing".
	DMPolicy string `hcl:"dm_policy,optional"`

	// AllowFrom are senders allowed in direct messages besides the owners
	// (allow_from).
	AllowFrom []string `hcl:"allow_from,optional"`

	// GroupPolicy decides which groups the agent answers in (group_policy):
	// "allowlist" — only Groups; "open" — every group the bot is in;
	// "disabled" — none. Default "allowlist".
	GroupPolicy string `hcl:"group_policy,optional"`

	// Groups are the allowed groups, "<instance>:<group id>" (groups).
	Groups []string `hcl:"groups,optional"`

	// GroupAllowFrom, when set, are the senders who may trigger the agent
	// in allowed groups (group_allow_from, OpenClaw's name), besides the
	// owners; other members' messages are kept as the group's context
	// only. Empty: any member may.
	GroupAllowFrom []string `hcl:"group_allow_from,optional"`

	// RequireMention makes the agent answer in groups only when mentioned,
	// replied to, or addressed with a trigger word (require_mention).
	// Default true.
	RequireMention bool `hcl:"require_mention,optional"`

	// TriggerWords count as a mention in groups (trigger_words), matched as
	// whole words, case-insensitively.
	TriggerWords []string `hcl:"trigger_words,optional"`
}

func defaultAccess() *Access {
	return &Access{DMPolicy: DefaultDMPolicy, GroupPolicy: DefaultGroupPolicy, RequireMention: true}
}

func (a *Access) check(k *checker) {
	k.enum("dm_policy", a.DMPolicy, DMPolicies)
	k.enum("group_policy", a.GroupPolicy, GroupPolicies)
	k.entries("owners", "sender", a.Owners)
	k.entries("allow_from", "sender", a.AllowFrom)
	k.entries("groups", "group", a.Groups)
	k.entries("group_allow_from", "sender", a.GroupAllowFrom)
	for i, w := range a.TriggerWords {
		if strings.TrimSpace(w) == "" {
			k.errorf(k.elemRange("trigger_words", i, len(a.TriggerWords)), "Invalid value for access.trigger_words",
				"A trigger word must not be empty.")
		}
	}
}

// SplitEntry splits an access entry "<instance>:<id>" at its first colon.
// ok is false when either part is empty.
func SplitEntry(entry string) (instance, id string, ok bool) {
	instance, id, found := strings.Cut(entry, ":")
	return instance, id, found && instance != "" && id != ""
}

// entries checks a list of "<instance>:<id>" entries.
func (k *checker) entries(name, what string, list []string) {
	instances := k.cfg.instanceNames()
	for i, e := range list {
		r := k.elemRange(name, i, len(list))
		instance, _, ok := SplitEntry(e)
		if !ok {
			k.errorf(r, "Invalid entry in "+k.qualified(name),
				"%q is not \"<instance>:<%s id>\": write the plugin instance name, a colon and the %s's platform id, e.g. %q.",
				e, what, what, exampleEntry(instances))
			continue
		}
		if !slices.Contains(instances, instance) {
			k.errorf(r, "Unknown plugin instance in "+k.qualified(name),
				"%q names plugin instance %q, but no plugin %q block is defined.%s",
				e, instance, instance, didYouMean(instance, instances))
		}
	}
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
