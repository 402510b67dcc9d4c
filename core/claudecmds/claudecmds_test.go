package claudecmds

import (
	"os"
	"path/filepath"
	"testing"
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
