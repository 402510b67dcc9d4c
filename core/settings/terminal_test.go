package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// TestTerminalCommands: a session opens in its agent's workspace with the
// bot's config directory, or the chat's own when its claude ran sandboxed
// (its transcripts are there); no command before a claude session.
func TestTerminalCommands(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.hcl")
	cfg := loadConfig(t, path, "data_dir = \"data\"\nagent {\n  workspace = \"ws\"\n}\n")
	ws, data := filepath.Join(dir, "ws"), filepath.Join(dir, "data")
	open := TerminalCommands(cfg)
	plain := sessionkey.Key{Agent: "main", Chat: "tg:direct:1"}
	if got, want := open(plain, "s-1"), "cd "+ws+" && CLAUDE_CONFIG_DIR="+filepath.Join(data, "claude")+" claude --resume s-1"; got != want {
		t.Errorf("unsandboxed chat: %q, want %q", got, want)
	}
	boxed := sessionkey.Key{Agent: "main", Chat: "tg:direct:2"}
	own := runner.ChatConfigDir(filepath.Join(data, "runner"), boxed.String())
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, want := open(boxed, "s-2"), "cd "+ws+" && CLAUDE_CONFIG_DIR="+own+" claude --resume s-2"; got != want {
		t.Errorf("sandboxed chat: %q, want %q", got, want)
	}
	if got := open(plain, ""); got != "" {
		t.Errorf("no claude session yet: %q", got)
	}
}
