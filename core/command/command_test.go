package command

import (
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/vectors"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
)

// openclawBuiltins is OpenClaw's built-in command list; the vectors check
// the grammar against it. clawhost's own built-ins are the composer's.
var openclawBuiltins = []string{
	"help", "commands", "status", "whoami", "id", "context", "stop", "restart",
	"new", "reset", "compact", "think", "thinking", "t", "verbose", "v",
	"reasoning", "reason", "elevated", "elev", "model", "models", "queue",
	"usage", "activation", "send", "config", "debug",
}

func openclawRegistry() *Registry {
	specs := make([]Spec, len(openclawBuiltins))
	for i, n := range openclawBuiltins {
		specs[i] = Spec{Name: n}
	}
	return NewRegistry(specs)
}

// TestVectorsCommands runs OpenClaw's hasControlCommand and
// isControlCommandMessage cases against the registry's grammar. The
// isSessionBoundaryCommandText (5) and hasInlineCommandTokens (4) cases do
// not apply: clawhost's session boundaries are its configured reset
// triggers (core/sessionreset, checked by the reset.resetTriggerCommand
// vectors), and it has no inline-command detection.
func TestVectorsCommands(t *testing.T) {
	t.Parallel()
	r := openclawRegistry()
	groups := map[string]func(string) bool{
		"commands.hasControlCommand": func(s string) bool { _, ok := r.Parse(s); return ok },
		"commands.isControlCommandMessage": func(s string) bool {
			_, ok := r.Parse(s)
			return ok || IsAbortTrigger(s)
		},
	}
	for group, fn := range groups {
		vectors.Func(t, group, fn)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	r := NewRegistry([]Spec{{Name: "status", Help: "s"}})
	r.SetPlugins([]PluginCommands{{Instance: "ops", Specs: []sdkcommand.Spec{{Name: "Deploy", Aliases: []string{"dp"}}}}})
	cases := []struct {
		in, name, args, instance string
		ok                       bool
	}{
		{"/deploy prod  ", "deploy", "prod", "ops", true},
		{"/dp prod", "dp", "prod", "ops", true},
		{"  /STATUS: full", "status", "full", "", true},
		{"/status\nmore", "status", "more", "", true},
		{"/deployx", "", "", "", false},
		{"deploy", "", "", "", false},
		{"/", "", "", "", false},
		{"/status@bot", "", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			inv, ok := r.Parse(tc.in)
			if inv.Name != tc.name || inv.Args != tc.args || ok != tc.ok || inv.Instance != tc.instance {
				t.Errorf("got %+v %v", inv, ok)
			}
		})
	}
	if inv, _ := r.Parse("/dp"); inv.Plugin.Name != "Deploy" {
		t.Errorf("an alias executes the plugin's canonical command, got %q", inv.Plugin.Name)
	}
}

func TestSetPluginsConflicts(t *testing.T) {
	t.Parallel()
	r := NewRegistry([]Spec{{Name: "status", Help: "session status"}})
	warns := r.SetPlugins([]PluginCommands{
		{Instance: "a", Specs: []sdkcommand.Spec{{Name: "status"}, {Name: "ping", Description: "pong", OwnerOnly: true}}},
		{Instance: "b", Specs: []sdkcommand.Spec{{Name: "ping"}}},
	})
	if len(warns) != 2 || !strings.Contains(warns[0], "shadows a built-in") || !strings.Contains(warns[1], "a kept") {
		t.Errorf("warnings: %q", warns)
	}
	inv, ok := r.Parse("/ping")
	if !ok || inv.Instance != "a" || !inv.OwnerOnly {
		t.Errorf("first offer wins with its roles: %+v", inv)
	}
	if inv, _ := r.Parse("/status"); !inv.Builtin() {
		t.Errorf("built-in kept: %+v", inv)
	}
	menu := r.Menu()
	if len(menu) != 2 || menu[0].Name != "status" || menu[1].Name != "ping" || menu[1].Description != "pong" {
		t.Errorf("menu: %+v", menu)
	}
	if h := r.Help(); !strings.Contains(h, "/status — session status\n/ping — pong\n") {
		t.Errorf("help: %q", h)
	}
	r.SetPlugins(nil)
	if _, ok := r.Parse("/ping"); ok {
		t.Error("a stopped plugin's commands are gone")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/new hi", "/status@x", "/t:", "/", "/\u00e9"} {
		f.Add(s)
	}
	r := openclawRegistry()
	f.Fuzz(func(t *testing.T, text string) {
		inv, ok := r.Parse(text)
		if ok && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), "/"+inv.Name) {
			t.Fatalf("parsed %q from %q", inv.Name, text)
		}
	})
}
