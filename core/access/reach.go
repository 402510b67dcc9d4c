package access

import (
	"fmt"
	"slices"
	"strings"
)

// Channel is one enabled plugin instance people may write through, as
// [Policy.Strangers] sees it.
type Channel struct {
	// Instance is the plugin instance's name ("tg").
	Instance string
	// Local: only the operator reaches it — the web chat on loopback,
	// whose every page needs the token kept 0600 in data_dir.
	Local bool
}

// Strangers says why someone besides the owners may reach the agent
// through channels under this policy: one line per reason, none when
// only owners can. A local channel is the operator's own. On another,
// these count: a direct-message policy that admits or pairs strangers
// ("open", "pairing"), an allow_from entry that is not an owner (a
// wildcard included), open groups, and any listed group — its other
// members' messages reach the agent's prompt as context even where only
// owners may start a turn. Entries of instances not in channels (disabled
// plugins) count for nothing.
func (a *Policy) Strangers(channels []Channel) []string {
	var out []string
	for _, c := range channels {
		if c.Local {
			continue
		}
		switch a.DMPolicy {
		case PolicyOpen:
			out = append(out, fmt.Sprintf(`dm_policy = "open": anyone who writes to %s`, c.Instance))
		case PolicyAllowlist:
		default:
			out = append(out, fmt.Sprintf(`dm_policy = "pairing": a stranger on %s is let in once a pairing code is approved`, c.Instance))
		}
		for _, e := range a.AllowFrom {
			if strings.HasPrefix(e, c.Instance+":") && !slices.Contains(a.Owners, e) {
				out = append(out, fmt.Sprintf("allow_from admits %q, not an owner", e))
			}
		}
		switch {
		case a.GroupPolicy == PolicyDisabled:
		case a.GroupPolicy == PolicyOpen:
			out = append(out, fmt.Sprintf(`group_policy = "open": every group of %s the bot is added to`, c.Instance))
		default:
			for _, g := range a.groups() {
				if strings.HasPrefix(g, c.Instance+":") {
					out = append(out, fmt.Sprintf("group %q: its members write to the agent", g))
				}
			}
		}
	}
	return out
}

// groups are the listed groups (groups and group blocks), sorted, once.
func (a *Policy) groups() []string {
	gs := slices.Clone(a.Groups)
	for id := range a.GroupRules {
		gs = append(gs, id)
	}
	slices.Sort(gs)
	return slices.Compact(gs)
}
