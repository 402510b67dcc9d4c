package claudecmds

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		text, name, args string
		cc, ok           bool
	}{
		{"/greet Bob and Ann", "greet", "Bob and Ann", false, true},
		{"  /greet  ", "greet", "", false, true},
		{"/greet@my_bot hi", "greet", "hi", false, true},
		{"/greet\nline two", "greet", "line two", false, true},
		{"/cc status now", "status", "now", true, true},
		{"/CC /status", "status", "", true, true},
		{"/cc", "", "", true, true},
		{"hello /greet", "", "", false, false},
		{"/", "", "", false, false},
	} {
		name, args, cc, ok := Split(c.text)
		if name != c.name || args != c.args || cc != c.cc || ok != c.ok {
			t.Errorf("Split(%q) = %q %q %v %v, want %q %q %v %v", c.text, name, args, cc, ok, c.name, c.args, c.cc, c.ok)
		}
	}
}

// TestCommands: the project's files and what init listed, without the
// commands a chat may not run; a typed name matches with '_' for '-'.
func TestCommands(t *testing.T) {
	ws := t.TempDir()
	write := func(p, body string) {
		full := filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".claude/commands/greet.md", "---\ndescription: \"Greet warmly\"\n---\nbody\n")
	write(".claude/commands/plain.md", "\n# Plain heading\nmore\n")
	write(".claude/commands/sub/inner.md", "x")
	write(".claude/skills/haiku/SKILL.md", "---\nname: haiku\ndescription: Write a haiku\n---\n")
	write(".claude/skills/empty/README.md", "no SKILL.md")
	changed := 0
	c := New(func(string) string { return ws }, func(string) { changed++ })
	got := map[string]string{}
	for _, cmd := range c.Commands("main") {
		got[cmd.Name] = cmd.Description
	}
	want := map[string]string{"greet": "Greet warmly", "plain": "Plain heading", "haiku": "Write a haiku"}
	if len(got) != len(want) {
		t.Fatalf("commands %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("commands %v, want %v", got, want)
		}
	}
	c.Saw("main", []string{"greet", "code-review", "clear", "__internal", "focus", "bashy"}, []string{"code-review"}, []string{"bashy"})
	c.Saw("main", []string{"greet", "code-review", "clear", "__internal", "focus", "bashy"}, []string{"code-review"}, []string{"bashy"})
	if changed != 1 {
		t.Fatalf("onChange called %d times, want 1 (the second init is the same)", changed)
	}
	for _, name := range []string{"clear", "__internal", "focus", "bashy"} {
		if _, ok := c.Lookup("main", name); ok {
			t.Errorf("%s is offered to a chat", name)
		}
		if c.NotInChat("main", name) == "" {
			t.Errorf("%s has no reason to be refused", name)
		}
	}
	if cmd, ok := c.Lookup("main", "Code_Review"); !ok || cmd.Name != "code-review" {
		t.Fatalf("Lookup(Code_Review) = %+v %v", cmd, ok)
	}
	if _, ok := c.Lookup("other", "code-review"); ok {
		t.Fatal("another agent has main's init commands")
	}
	var nilCat *Catalog
	if _, ok := nilCat.Lookup("main", "greet"); ok || nilCat.NotInChat("main", "greet") != "" {
		t.Fatal("a nil catalog knows commands")
	}
	nilCat.Saw("main", []string{"x"}, nil, nil)
}

// TestProjectFilesNotFollowed: the workspace is claude's to write, the
// menu is everyone's to read, and the host reads the files as itself: a
// command file or folder that is a symlink (to a secret of the host's) is
// not read, and a FIFO does not block the host.
func TestProjectFilesNotFollowed(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("HOSTSECRET token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(outside, "cmds"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "cmds", "stolen.md"), []byte("HOSTSECRET2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".claude/commands", ".claude/skills/evil"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(ws, ".claude/commands/leak.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(ws, ".claude/skills/evil/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, ".claude/commands/hang.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A second workspace whose commands folder is a symlink out.
	ws2 := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws2, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "cmds"), filepath.Join(ws2, ".claude/commands")); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Command, 2)
	go func() {
		done <- New(func(string) string { return ws }, nil).Commands("main")
		done <- New(func(string) string { return ws2 }, nil).Commands("main")
	}()
	for range 2 {
		select {
		case cmds := <-done:
			for _, c := range cmds {
				if strings.Contains(c.Description, "HOSTSECRET") || c.Name == "stolen" {
					t.Fatalf("a file outside the workspace was read: %+v", cmds)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("reading the commands blocked on a FIFO")
		}
	}
}
