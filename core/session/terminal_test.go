package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestTerminalCommand(t *testing.T) {
	for _, c := range []struct{ ws, dir, id, want string }{
		{"/srv/ws", "/srv/data/claude", "0b9d6c9e-1b1e-4c1e-9d3e-2f0f7f0f7f0f",
			"cd /srv/ws && CLAUDE_CONFIG_DIR=/srv/data/claude claude --resume 0b9d6c9e-1b1e-4c1e-9d3e-2f0f7f0f7f0f"},
		{"/srv/ws", "", "abc", "cd /srv/ws && claude --resume abc"},
		{"/srv/my ws", "/d/it's", "abc", `cd '/srv/my ws' && CLAUDE_CONFIG_DIR='/d/it'\''s' claude --resume abc`},
		{"/srv/ws", "/d", "", ""},
	} {
		if got := TerminalCommand(c.ws, c.dir, c.id); got != c.want {
			t.Errorf("TerminalCommand(%q, %q, %q) = %q, want %q", c.ws, c.dir, c.id, got, c.want)
		}
	}
}

// TestTerminalCommandInAShell: a workspace and a config directory with a
// quote, a space and a $ reach claude as they are.
func TestTerminalCommandInAShell(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "it's a $HOME")
	cfg := filepath.Join(dir, "c`fg")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{ws, cfg, bin} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A claude on PATH that prints where it runs and what it got.
	sdktest.WriteExecutable(t, filepath.Join(bin, "claude"), []byte("#!/bin/sh\npwd\necho \"$CLAUDE_CONFIG_DIR\"\necho \"$@\"\n"), 0o700)
	cmd := exec.Command("/bin/sh", "-c", TerminalCommand(ws, cfg, "id-1"))
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=/nonexistent"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), ws+"\n"+cfg+"\n--resume id-1"; got != want {
		t.Errorf("the shell ran\n%s\nwant\n%s", got, want)
	}
}
