package turn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/claudecmds"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestClaudeCommand: which messages become the raw line claude expands.
func TestClaudeCommand(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".claude", "commands"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"greet", "new"} {
		if err := os.WriteFile(filepath.Join(ws, ".claude", "commands", n+".md"), []byte("body"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cat := claudecmds.New(func(string) string { return ws }, nil)
	cat.Saw("main", []string{"code-review", "clear"}, nil, nil)
	tr := &Turns{opts: Options{ClaudeCommands: cat}}
	tr.set.Store(&Settings{ResetTriggers: []string{"/new", "/reset"}})
	msg := func(text string) []message.Message { return []message.Message{{Body: text}} }
	for _, c := range []struct {
		text, want string
		ok         bool
	}{
		{"/greet Bob and Ann", "/greet Bob and Ann", true},
		{"/GREET", "/greet", true},
		{"/code_review the diff", "/code-review the diff", true},
		{"/cc status now", "/status now", true}, // not the agent's: claude says so
		{"/cc new", "/new", true},               // clawhost's trigger, claude's command by /cc
		{"/new hello", "", false},               // clawhost's reset trigger
		{"/model opus hi", "", false},           // clawhost's inline directive
		{"/clear", "", false},                   // not offered to a chat
		{"/cc clear", "", false},                // not even by /cc
		{"/unknown x", "", false},               // text for the agent
		{"greet", "", false},
	} {
		got, ok := tr.claudeCommand("main", msg(c.text))
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %q %v, want %q %v", c.text, got, ok, c.want, c.ok)
		}
	}
	fwd := []message.Message{{Body: "/greet Bob", Forward: &channel.Forward{From: "x"}}}
	if _, ok := tr.claudeCommand("main", fwd); ok {
		t.Error("a forwarded /greet runs as a command")
	}
	if _, ok := tr.claudeCommand("main", append(msg("/greet a"), msg("/greet b")...)); ok {
		t.Error("two messages run as one command")
	}
	if _, ok := tr.claudeCommand("other", msg("/code_review")); ok {
		t.Error("another agent runs main's init commands")
	}
}
