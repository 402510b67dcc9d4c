package command

import (
	"context"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestBuiltinTable pins the table: /help order, and the role each
// built-in needs (before the split: the Builtins list with OwnerOnly and
// the controlled set).
func TestBuiltinTable(t *testing.T) {
	t.Parallel()
	want := []struct {
		name  string
		needs need
	}{
		{"new", control}, {"reset", control}, {"status", anyone}, {"help", anyone}, {"commands", anyone},
		{"stop", control}, {"resume", owner}, {"whoami", anyone}, {"approve", owner}, {"deny", owner}, {"revoke", owner}, {"verbose", anyone},
		{"model", control}, {"effort", control}, {"mode", control}, {"queue", control}, {"agent", control}, {"worktree", control}, {"compact", control},
		{"plan", anyone}, {"list", anyone}, {"switch", control}, {"name", control}, {"continue", ownersChat}, {"desktop", ownersChat}, {"detach", owner}, {"schedule", owner}, {"usage", anyone}, {"export", anyone},
	}
	if len(builtins) != len(want) || len(Builtins) != len(want) || len(builtinByName) != len(want) {
		t.Fatalf("%d built-ins (%d specs, %d names), want %d", len(builtins), len(Builtins), len(builtinByName), len(want))
	}
	for i, w := range want {
		b := builtins[i]
		if b.name != w.name || b.needs != w.needs || b.help == "" || b.run == nil {
			t.Errorf("built-in %d: %q needs %d (help %q), want %q needs %d", i, b.name, b.needs, b.help, w.name, w.needs)
		}
		if s := Builtins[i]; s.Name != b.name || s.Help != b.help || s.OwnerOnly != (b.needs == owner || b.needs == ownersChat) || !s.Builtin() {
			t.Errorf("spec %d: %+v", i, s)
		}
	}
}

// TestRolesAreEnforced: every built-in that needs a role refuses a group
// member without it before its handler runs, and one that needs none
// answers them.
func TestRolesAreEnforced(t *testing.T) {
	t.Parallel()
	h, s, _, _ := newHandler(t)
	m := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", From: "tg:5", Sender: channel.Sender{ID: "5"}}
	for _, b := range builtins {
		inv, ok := h.Registry.Parse("/" + b.name + " x")
		if !ok {
			t.Fatalf("/%s is not registered", b.name)
		}
		got := h.Answer(context.Background(), sessionkey.Key{Agent: "main", Chat: "tg:group:-5"}, m, inv, Role{})
		switch b.needs {
		case owner, ownersChat:
			if got != "Only an owner can use /"+b.name+"." {
				t.Errorf("/%s by a member: %q", b.name, got)
			}
		case control:
			if got != "In this group only an owner can use /"+b.name+"." {
				t.Errorf("/%s by a member: %q", b.name, got)
			}
		default:
			// Open to anyone, with owners' parts the handler decides:
			// another's usage (/usage x), a group's export.
			if b.name == "usage" || b.name == "export" {
				continue
			}
			if strings.Contains(got, "only an owner") || strings.Contains(got, "Only an owner") {
				t.Errorf("/%s, open to members, refused: %q", b.name, got)
			}
		}
	}
	if len(s.resets) != 0 || s.model != "" || s.queue != "" {
		t.Errorf("a refused command acted: resets %q, model %q, queue %q", s.resets, s.model, s.queue)
	}
}
