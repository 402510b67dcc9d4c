package access

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

func TestTriggerWordBoundaries(t *testing.T) {
	t.Parallel()
	a := Policy{TriggerWords: []string{"claw", "hé"}}
	for text, want := range map[string]bool{"claw": true, "Hey CLAW!": true, "clawhost": false, "a-claw-b": true, "hé là": true, "théâtre": false} {
		if got := a.triggered(text); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	p := Policy{DMPolicy: PolicyPairing, AllowFrom: []string{"tg:1"}, Owners: []string{"tg:9"}, GroupPolicy: PolicyAllowlist, Groups: []string{"tg:-5"}, RequireMention: true, TriggerWords: []string{"claw"}}
	dm := func(id string) *message.Message {
		return &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: id, Sender: channel.Sender{ID: id}, From: "tg:" + id}
	}
	// Sender 1 is on allow_from, so they trigger in groups too.
	group := func(chat, body string, mention bool) *message.Message {
		return &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: chat, Body: body, WasMentioned: mention, Sender: channel.Sender{ID: "1"}, From: "tg:1"}
	}
	groupFrom := func(chat, sender string, mention bool) *message.Message {
		m := group(chat, "hi", mention)
		m.Sender.ID, m.From = sender, "tg:"+sender
		return m
	}
	gaf := p
	gaf.GroupAllowFrom = []string{"tg:3"}
	cases := []struct {
		name string
		pol  Policy
		m    *message.Message
		ok   bool // approved through pairing
		want Verdict
	}{
		{"allowlisted", p, dm("1"), false, Admit},
		{"owner", p, dm("9"), false, Admit},
		{"stranger pairs", p, dm("2"), false, Pair},
		{"paired stranger", p, dm("2"), true, Admit},
		{"stranger under allowlist", Policy{DMPolicy: PolicyAllowlist}, dm("2"), false, Refuse},
		{"open", Policy{DMPolicy: PolicyOpen}, dm("2"), false, Admit},
		{"unlisted group", p, group("-6", "hi", true), false, IgnoreGroup},
		{"listed group, not addressed", p, group("-5", "hi", false), false, Unaddressed},
		{"listed group, mentioned", p, group("-5", "hi", true), false, Admit},
		{"listed group, trigger word", p, group("-5", "hey claw", false), false, Admit},
		{"groups disabled", Policy{GroupPolicy: PolicyDisabled}, group("-5", "hi", true), false, IgnoreGroup},
		{"groups open, nobody named", Policy{GroupPolicy: PolicyOpen}, group("-7", "hi", false), false, Unaddressed},
		{"groups open to all, written", Policy{GroupPolicy: PolicyOpen, GroupAllowFrom: []string{"tg:*"}}, group("-7", "hi", false), false, Admit},
		// Only named senders trigger: a member listed nowhere is context
		// only, mention or not; group_allow_from, allow_from and owners
		// trigger.
		{"member listed nowhere", p, groupFrom("-5", "4", true), false, Unaddressed},
		{"member listed nowhere, approved through pairing", p, groupFrom("-5", "4", true), true, Unaddressed},
		{"group_allow_from, other member", gaf, groupFrom("-5", "4", true), false, Unaddressed},
		{"group_allow_from, listed member", gaf, groupFrom("-5", "3", true), false, Admit},
		{"group_allow_from, allow_from member", gaf, groupFrom("-5", "1", true), false, Admit},
		{"group_allow_from, owner", gaf, groupFrom("-5", "9", true), false, Admit},
		{"group_allow_from, listed member not addressed", gaf, groupFrom("-5", "3", false), false, Unaddressed},
		{"members trigger", Policy{Groups: []string{"tg:-5"}, Members: []string{"tg:4"}}, groupFrom("-5", "4", false), false, Admit},
		{"group open to all", Policy{Groups: []string{"tg:-5"}, GroupAllowFrom: []string{"tg:*"}}, groupFrom("-5", "4", false), false, Admit},
		// Approvals count under pairing only.
		{"paired stranger under allowlist", Policy{DMPolicy: PolicyAllowlist}, dm("2"), true, Refuse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := c.pol.Decide(t.Context(), c.m, func(_ context.Context, _, _ string) bool { return c.ok })
			if got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestRefusalsOncePerWindow(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	r := NewRefusals(time.Hour, func() time.Time { return now })
	if !r.Allow("tg:1") || r.Allow("tg:1") || !r.Allow("tg:2") {
		t.Fatal("one refusal per sender")
	}
	now = now.Add(59 * time.Minute)
	if r.Allow("tg:1") {
		t.Fatal("still inside the window")
	}
	now = now.Add(time.Minute)
	if !r.Allow("tg:1") {
		t.Fatal("the window passed")
	}
}

// TestDecideAltIDs: a sender with alternate ids (a WhatsApp LID beside the
// phone number) is admitted by an entry written with any of them, as owner,
// on the allowlist or approved through pairing under another form.
func TestDecideAltIDs(t *testing.T) {
	t.Parallel()
	wa := func(id string, alt ...string) *message.Message {
		return &message.Message{Instance: "wa", ChatType: channel.ChatDirect, ChatID: id, Sender: channel.Sender{ID: id, AltIDs: alt}, From: "wa:" + id}
	}
	allow := Policy{DMPolicy: PolicyPairing, AllowFrom: []string{"wa:+15550001"}, Owners: []string{"wa:77@lid"}}
	cases := []struct {
		name     string
		m        *message.Message
		approved string // the id pairing approved
		want     Verdict
	}{
		{"phone number as id", wa("+15550001", "11@lid"), "", Admit},
		{"phone number as alt id", wa("11@lid", "+15550001"), "", Admit},
		{"owner by LID", wa("+15550009", "77@lid"), "", Admit},
		{"neither form listed", wa("+15550002", "12@lid"), "", Pair},
		{"approved under the LID", wa("+15550002", "12@lid"), "12@lid", Admit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := allow.Decide(t.Context(), c.m, func(_ context.Context, inst, id string) bool { return inst == "wa" && id == c.approved })
			if got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestMayControl(t *testing.T) {
	t.Parallel()
	msg := func(chatType channel.ChatType, sender string) *message.Message {
		return &message.Message{Instance: "tg", ChatType: chatType, ChatID: "-5", Sender: channel.Sender{ID: sender}, From: "tg:" + sender}
	}
	withOwners := Policy{Owners: []string{"tg:9"}}
	withList := Policy{Owners: []string{"tg:9"}, GroupAllowFrom: []string{"tg:3"}}
	for _, c := range []struct {
		name string
		pol  Policy
		m    *message.Message
		want bool
	}{
		{"direct chat: the sender's own session", withOwners, msg(channel.ChatDirect, "1"), true},
		// Nobody named: nobody controls a group session (before, every
		// member did).
		{"group, nobody configured", Policy{}, msg(channel.ChatGroup, "1"), false},
		{"group, open to all members", Policy{GroupAllowFrom: []string{"tg:*"}}, msg(channel.ChatGroup, "1"), true},
		{"group, allow_from member", Policy{AllowFrom: []string{"tg:1"}}, msg(channel.ChatGroup, "1"), true},
		{"group, members only", Policy{Members: []string{"tg:2"}}, msg(channel.ChatGroup, "1"), false},
		{"group, owner", withOwners, msg(channel.ChatGroup, "9"), true},
		{"group, member", withOwners, msg(channel.ChatGroup, "1"), false},
		{"group, member group_allow_from lists", withList, msg(channel.ChatGroup, "3"), true},
		{"group, member it does not", withList, msg(channel.ChatGroup, "1"), false},
	} {
		if got := c.pol.MayControl(c.m); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// access.members control group sessions; a group block allows its group,
// replaces group_allow_from and require_mention there, and adds members.
func TestMembersAndGroupRules(t *testing.T) {
	t.Parallel()
	off := false
	p := Policy{GroupPolicy: PolicyAllowlist, RequireMention: true, Owners: []string{"tg:9"}, Members: []string{"tg:2"},
		GroupRules: map[string]GroupRule{"tg:-7": {AllowFrom: []string{"tg:3"}, Members: []string{"tg:4"}, RequireMention: &off}}}
	msg := func(chat, sender, body string, mention bool) *message.Message {
		return &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: chat, Body: body, WasMentioned: mention, Sender: channel.Sender{ID: sender}, From: "tg:" + sender}
	}
	decide := func(m *message.Message) Verdict { return p.Decide(t.Context(), m, nil) }
	if v := decide(msg("-7", "3", "no mention needed", false)); v != Admit {
		t.Errorf("listed sender in the ruled group: %v", v)
	}
	if v := decide(msg("-7", "5", "hi", true)); v != Unaddressed {
		t.Errorf("a sender the group's allow_from does not list: %v", v)
	}
	if v := decide(msg("-8", "3", "hi", true)); v != IgnoreGroup {
		t.Errorf("a group without a rule or a listing: %v", v)
	}
	for sender, want := range map[string]bool{"9": true, "2": true, "4": true, "3": true, "5": false} {
		if got := p.MayControl(msg("-7", sender, "", true)); got != want {
			t.Errorf("MayControl for %s in the ruled group: %v, want %v", sender, got, want)
		}
	}
	if p.MayControl(msg("-6", "4", "", true)) {
		t.Error("a group member of -7 controls in another group")
	}
}

// TestIsMember: access.members and the group block's members are members;
// an owner or an allowed sender is not.
func TestIsMember(t *testing.T) {
	t.Parallel()
	a := &Policy{Owners: []string{"tg:1"}, Members: []string{"tg:2"}, AllowFrom: []string{"tg:4"},
		GroupRules: map[string]GroupRule{"tg:-9": {Members: []string{"tg:3"}}}}
	for _, tc := range []struct {
		from, chat string
		want       bool
	}{{"1", "-9", false}, {"2", "-1", true}, {"3", "-9", true}, {"3", "-1", false}, {"4", "-9", false}} {
		m := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: tc.chat, From: "tg:" + tc.from, Sender: channel.Sender{ID: tc.from}}
		if got := a.IsMember(m); got != tc.want {
			t.Errorf("sender %s in %s: IsMember = %v, want %v", tc.from, tc.chat, got, tc.want)
		}
	}
}
