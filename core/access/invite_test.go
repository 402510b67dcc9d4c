package access

import (
	"context"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

func TestInvite(t *testing.T) {
	t.Parallel()
	inviter := func(id string) *message.Message {
		// The invite arrives as the room's message: a group chat type,
		// which Invite must not judge by.
		return &message.Message{Instance: "mx", ChatType: channel.ChatGroup, ChatID: "!room:hs", Sender: channel.Sender{ID: id}, From: "mx:" + id}
	}
	approved := func(_ context.Context, instance, id string) bool { return instance == "mx" && id == "@paired:hs" }
	base := Policy{Owners: []string{"mx:@owner:hs"}, AllowFrom: []string{"mx:@alice:hs"}, GroupPolicy: PolicyAllowlist}
	with := func(dm string) Policy { p := base; p.DMPolicy = dm; return p }
	cases := []struct {
		name   string
		pol    Policy
		who    string
		direct bool
		join   bool
		why    string
	}{
		{"owner, group room, allowlist", with(PolicyAllowlist), "@owner:hs", false, true, "owner"},
		{"allow_from, group room, allowlist", with(PolicyAllowlist), "@alice:hs", false, true, "allow_from"},
		{"allow_from, dm, pairing", with(PolicyPairing), "@alice:hs", true, true, "allow_from"},
		{"paired, group room, pairing", with(PolicyPairing), "@paired:hs", false, true, "pairing"},
		{"paired under allowlist is not honoured", with(PolicyAllowlist), "@paired:hs", false, false, "allowlist"},
		{"stranger dm, pairing", with(PolicyPairing), "@eve:hs", true, true, "pairing code"},
		{"stranger dm, default policy is pairing", with(""), "@eve:hs", true, true, "pairing code"},
		{"stranger group room, pairing", with(PolicyPairing), "@eve:hs", false, false, "group room"},
		{"stranger dm, allowlist", with(PolicyAllowlist), "@eve:hs", true, false, "allowlist"},
		{"stranger group room, allowlist", with(PolicyAllowlist), "@eve:hs", false, false, "allowlist"},
		{"stranger dm, disabled", with(PolicyDisabled), "@eve:hs", true, false, "disabled"},
		{"stranger group room, open", with(PolicyOpen), "@eve:hs", false, true, "open"},
		{"another instance's allow_from does not count", Policy{DMPolicy: PolicyAllowlist, AllowFrom: []string{"tg:@alice:hs"}}, "@alice:hs", true, false, "allowlist"},
		{"instance wildcard", Policy{DMPolicy: PolicyAllowlist, AllowFrom: []string{"mx:*"}}, "@eve:hs", false, true, "allow_from"},
	}
	for _, c := range cases {
		join, why := c.pol.Invite(context.Background(), inviter(c.who), c.direct, approved)
		if join != c.join || !strings.Contains(why, c.why) {
			t.Errorf("%s: join %v (%q), want %v (%q)", c.name, join, why, c.join, c.why)
		}
	}
}
