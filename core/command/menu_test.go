package command

import (
	"context"
	"reflect"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

// TestChatMenus: the default menu offers the default agent's claude
// commands; each MenuChats chat gets clawhost's commands and its own
// agent's (a name clawhost has, status, stays clawhost's); PublishChat sends one
// chat's; PublishMenus sends them all again.
func TestChatMenus(t *testing.T) {
	t.Parallel()
	h, _, p, _ := newHandler(t)
	claude := map[string][]channel.MenuEntry{
		"main": {{Name: "greet", Description: "greet (claude)"}},
		"ops":  {{Name: "release", Description: "release (claude)"}, {Name: "status", Description: "claude's status"}},
	}
	h.Claude = func(agent string) []channel.MenuEntry { return claude[agent] }
	h.MenuChats = func() []MenuChat {
		return []MenuChat{{Instance: "tg", ChatID: "100", Agent: "ops"}, {Instance: "dc", Agent: "ops"}}
	}
	p.menus, p.chats = nil, nil
	h.PublishMenus(context.Background())
	builtins := ""
	for _, e := range h.Registry.Menu() {
		builtins += " " + e.Name
	}
	want := []string{"tg/100:" + builtins + " cc release", "dc/:" + builtins + " cc release"}
	if !reflect.DeepEqual(p.chats, want) {
		t.Errorf("chat menus:\n got %q\nwant %q", p.chats, want)
	}
	if len(p.menus) != 1 || p.menus[0][len(p.menus[0])-1].Name != "greet" {
		t.Errorf("default menu %+v", p.menus)
	}
	p.chats = nil
	h.PublishChat(context.Background(), MenuChat{Instance: "tg", ChatID: "5", Agent: "main"})
	if want := []string{"tg/5:" + builtins + " cc greet"}; !reflect.DeepEqual(p.chats, want) {
		t.Errorf("PublishChat: %q, want %q", p.chats, want)
	}
}
