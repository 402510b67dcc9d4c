package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBootstrap: a new or empty workspace gets both files (0600), an
// existing file is kept, and a workspace that holds anything gets none.
func TestBootstrap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	wrote, err := Bootstrap(dir)
	if err != nil || len(wrote) != 2 {
		t.Fatalf("new workspace: %v %v", wrote, err)
	}
	for _, f := range wrote {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	if !HeartbeatEmpty(dir) {
		t.Error("the bootstrap HEARTBEAT.md should ask for nothing")
	}
	if err := os.WriteFile(filepath.Join(dir, MemoryFile), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if wrote, err := Bootstrap(dir); err != nil || len(wrote) != 0 {
		t.Errorf("a workspace with files: wrote %v, %v", wrote, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, MemoryFile)); string(b) != "mine" {
		t.Errorf("MEMORY.md overwritten: %q", b)
	}
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if wrote, _ := Bootstrap(repo); len(wrote) != 0 {
		t.Errorf("a repository got %v", wrote)
	}
}

// TestBlank: headings, comments, empty items and space are blank; any
// other line asks for something; a missing HEARTBEAT.md is not empty.
func TestBlank(t *testing.T) {
	for text, want := range map[string]bool{
		"":                           true,
		"# Heartbeat\n\n## Checks\n": true,
		"# H\n<!-- a\nmulti-line\ncomment -->\n- \n- [ ]\n": true,
		"# H\n- check the build\n":                          false,
		"Check mail.":                                       false,
		"# H\n<!-- open comment never closed":               true,
	} {
		if got := Blank(text); got != want {
			t.Errorf("Blank(%q) = %v, want %v", text, got, want)
		}
	}
	if HeartbeatEmpty(t.TempDir()) {
		t.Error("a missing HEARTBEAT.md counts as empty")
	}
}
