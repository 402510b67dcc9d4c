package command

import (
	"reflect"
	"testing"
)

// TestMenuChats: which chats get a menu of their own, and whose commands.
func TestMenuChats(t *testing.T) {
	t.Parallel()
	bound := []MenuChat{
		{Instance: "tg", ChatID: "100", Agent: "ops"},      // bound to ops: ops's menu
		{Instance: "tg", ChatID: "200", Agent: "main"},     // bound to the default agent: the default menu
		{Instance: "tg", ChatID: "300", Agent: "ops"},      // bound to ops, switched to default
		{Instance: "dc", ChatID: "", Agent: "ops"},         // every dc chat: dc's default menu is ops's
		{Instance: "dc", ChatID: "7", Agent: "ops"},        // dc's default menu is ops's already
		{Instance: "dc", ChatID: "8", Agent: "main"},       // under dc:* but bound to the default agent
		{Instance: "wa", ChatID: "", Agent: "main"},        // the default menu is the default agent's
		{Instance: "tg", ChatID: "100", Agent: "research"}, // a second binding of a place: the first wins
	}
	switched := map[chatRef]string{
		{"tg", "300"}: "main",
		{"tg", "400"}: "research", // not bound, switched with /agent
		{"tg", "500"}: "main",     // switched back to the agent it is bound to
	}
	want := []MenuChat{
		{Instance: "dc", ChatID: "", Agent: "ops"},
		{Instance: "dc", ChatID: "8", Agent: "main"},
		{Instance: "tg", ChatID: "100", Agent: "ops"},
		{Instance: "tg", ChatID: "300", Agent: "main"},
		{Instance: "tg", ChatID: "400", Agent: "research"},
		{Instance: "tg", ChatID: "500", Agent: "main"},
	}
	if got := menuChats(bound, switched); !reflect.DeepEqual(got, want) {
		t.Errorf("menuChats:\n got %+v\nwant %+v", got, want)
	}
	if got := menuChats(nil, nil); len(got) != 0 {
		t.Errorf("no bindings, no switches: %+v", got)
	}
}

// TestChatMenusSaw: a chat's menu is published anew when it runs under
// another agent than it was known to: not for a chat at its bound agent,
// not twice for the same agent, never for a topic.
func TestChatMenusSaw(t *testing.T) {
	t.Parallel()
	var c ChatMenus
	steps := []struct {
		chat, thread, agent, bound string
		want                       bool
	}{
		{"1", "", "main", "main", false}, // at its bound agent
		{"1", "", "ops", "main", true},   // switched
		{"1", "", "ops", "main", false},  // known
		{"1", "", "main", "main", true},  // switched back: its menu is replaced
		{"1", "", "main", "main", false},
		{"2", "9", "ops", "main", false}, // a topic has no menu of its own
		{"", "", "ops", "main", false},
	}
	for i, s := range steps {
		if got := c.Saw("tg", s.chat, s.thread, s.agent, s.bound); got != s.want {
			t.Errorf("step %d %+v: saw %v", i, s, got)
		}
	}
	if got := c.snapshot(); !reflect.DeepEqual(got, map[chatRef]string{{"tg", "1"}: "main"}) {
		t.Errorf("snapshot %v", got)
	}
}
