package access

import (
	"slices"
	"testing"
)

// TestStrangers: who besides the owners may reach the agent, per policy
// and channel — the local web chat is the operator's own, disabled
// instances count for nothing, and pairing, open DMs, a non-owner in
// allow_from, open or listed groups each count.
func TestStrangers(t *testing.T) {
	t.Parallel()
	web := Channel{Instance: "web", Local: true}
	tg := Channel{Instance: "tg"}
	webPublic := Channel{Instance: "web"}
	for _, tc := range []struct {
		name     string
		policy   Policy
		channels []Channel
		want     []string
	}{
		{"the default config, web chat only", Policy{DMPolicy: PolicyPairing, AllowFrom: []string{"web:*"}}, []Channel{web}, nil},
		{"open dms on the local web chat", Policy{DMPolicy: PolicyOpen}, []Channel{web}, nil},
		{"no channel", Policy{DMPolicy: PolicyOpen, GroupPolicy: PolicyOpen}, nil, nil},
		{"owners only", Policy{DMPolicy: PolicyAllowlist, Owners: []string{"tg:1"}, AllowFrom: []string{"tg:1"}}, []Channel{web, tg}, nil},
		{"allowlist, groups disabled", Policy{DMPolicy: PolicyAllowlist, GroupPolicy: PolicyDisabled, Groups: []string{"tg:-5"}}, []Channel{tg}, nil},
		{"the default config with telegram", Policy{DMPolicy: PolicyPairing, AllowFrom: []string{"web:*"}}, []Channel{web, tg},
			[]string{`dm_policy = "pairing": a stranger on tg is let in once a pairing code is approved`}},
		{"empty policy is pairing", Policy{}, []Channel{tg}, []string{`dm_policy = "pairing": a stranger on tg is let in once a pairing code is approved`}},
		{"open dms", Policy{DMPolicy: PolicyOpen}, []Channel{tg}, []string{`dm_policy = "open": anyone who writes to tg`}},
		{"allow_from a friend", Policy{DMPolicy: PolicyAllowlist, Owners: []string{"tg:1"}, AllowFrom: []string{"tg:1", "tg:2"}}, []Channel{tg},
			[]string{`allow_from admits "tg:2", not an owner`}},
		{"allow_from wildcard", Policy{DMPolicy: PolicyAllowlist, AllowFrom: []string{"tg:*"}}, []Channel{tg}, []string{`allow_from admits "tg:*", not an owner`}},
		{"allow_from of a disabled instance", Policy{DMPolicy: PolicyAllowlist, AllowFrom: []string{"dc:*"}}, []Channel{tg}, nil},
		{"web chat beyond loopback", Policy{DMPolicy: PolicyAllowlist, AllowFrom: []string{"web:*"}}, []Channel{webPublic}, []string{`allow_from admits "web:*", not an owner`}},
		{"open groups", Policy{DMPolicy: PolicyAllowlist, GroupPolicy: PolicyOpen}, []Channel{tg}, []string{`group_policy = "open": every group of tg the bot is added to`}},
		{"a listed group, owners only trigger", Policy{DMPolicy: PolicyAllowlist, Owners: []string{"tg:1"}, Groups: []string{"tg:-5"}, GroupRules: map[string]GroupRule{"tg:-5": {}, "tg:-6": {}}},
			[]Channel{tg}, []string{`group "tg:-5": its members write to the agent`, `group "tg:-6": its members write to the agent`}},
	} {
		if got := tc.policy.Strangers(tc.channels); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
