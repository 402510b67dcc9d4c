package ownersession

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProjectName: the directory claude 2.1.330 made for a cwd with "_"
// and "." (observed: /tmp/i77a-probe/my_work.space), and with characters
// beyond ASCII (observed: /tmp/pn/Pä🙂x made -tmp-pn-P---x: one "-" per
// UTF-16 code unit).
func TestProjectName(t *testing.T) {
	t.Parallel()
	for cwd, want := range map[string]string{
		"/tmp/i77a-probe/my_work.space": "-tmp-i77a-probe-my-work-space",
		"/tmp/anchors/claude-work/":     "-tmp-anchors-claude-work",
		"/home/ann/Projekt ä":           "-home-ann-Projekt--",
		"/tmp/pn/Pä🙂x":                  "-tmp-pn-P---x",
	} {
		if got := ProjectName(cwd); got != want {
			t.Errorf("ProjectName(%q) = %q, want %q", cwd, got, want)
		}
	}
}

// TestParse: claude's title is the last custom title, else the last AI
// title, else the last summary; turns count the user's own prompts only
// (not tool results, sub-agents, meta messages or slash commands); a torn
// last line is skipped.
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		want Summary
	}{
		{"titled.jsonl", Summary{Title: "Fix the parser", FirstPrompt: "remember the word PELICAN", Turns: 2}},
		{"untitled.jsonl", Summary{Title: "Deploying staging", FirstPrompt: "deploy the   staging server please", Turns: 1}},
		{"empty.jsonl", Summary{}},
	} {
		f, err := os.Open(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(f)
		f.Close()
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.file, got, err, tc.want)
		}
	}
}

// TestParseLongLine: a line longer than the bound is skipped, and the
// lines after it still count.
func TestParseLongLine(t *testing.T) {
	t.Parallel()
	long := `{"type":"attachment","content":"` + strings.Repeat("x", maxLine+10) + `"}`
	in := long + "\n" + `{"type":"user","message":{"content":"after the long one"}}` + "\n"
	got, err := Parse(strings.NewReader(in))
	if err != nil || got.Turns != 1 || got.FirstPrompt != "after the long one" {
		t.Fatalf("%+v, %v", got, err)
	}
}

const (
	id1 = "11111111-2222-3333-4444-555555555555"
	id2 = "22222222-2222-3333-4444-555555555555"
	id3 = "33333333-2222-3333-4444-555555555555"
)

// project writes the testdata transcripts as sessions of cwd in a new
// config directory, id3 written now, id1 an hour ago, id2 a day ago.
func project(t *testing.T, cwd string, now time.Time) string {
	t.Helper()
	cfg := t.TempDir()
	dir := ProjectDir(cfg, cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for id, f := range map[string]struct {
		file string
		age  time.Duration
	}{id1: {"titled.jsonl", time.Hour}, id2: {"untitled.jsonl", 24 * time.Hour}, id3: {"empty.jsonl", 10 * time.Second}} {
		b, err := os.ReadFile(filepath.Join("testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	// Not sessions: another project's, a file not named by a uuid, a link.
	_ = os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("{}\n"), 0o600)
	_ = os.Symlink(filepath.Join(dir, id1+".jsonl"), filepath.Join(dir, "44444444-2222-3333-4444-555555555555.jsonl"))
	other := ProjectDir(cfg, "/elsewhere")
	_ = os.MkdirAll(other, 0o700)
	_ = os.WriteFile(filepath.Join(other, "55555555-2222-3333-4444-555555555555.jsonl"), []byte("{}\n"), 0o600)
	return cfg
}

// TestList: the project's sessions only, newest first, each with its
// title or first prompt and turns; live when written within LiveWindow,
// or when a running process registered it under sessions/.
func TestList(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cwd := "/work/my.project"
	cfg := project(t, cwd, now)
	list, err := List(cfg, cwd, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.ID[:2]+" "+s.Label()+" "+strconv.Itoa(s.Turns)+" "+strconv.FormatBool(s.Live))
	}
	want := []string{"33 (no prompt) 0 true", "11 Fix the parser 2 false", "22 Deploying staging 1 false"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("listed %q, want %q", got, want)
	}
	// This process (it runs) registers id2; a dead pid registers id1.
	if err := os.MkdirAll(filepath.Join(cfg, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(cfg, "sessions", strconv.Itoa(os.Getpid())+".json"), []byte(`{"pid":1,"sessionId":"`+id2+`"}`), 0o600)
	_ = os.WriteFile(filepath.Join(cfg, "sessions", "999999999.json"), []byte(`{"sessionId":"`+id1+`"}`), 0o600)
	list, err = List(cfg, cwd, now.Add(time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Live || list[1].Live {
		t.Fatalf("an hour later, limit 2: %+v", list)
	}
	list, _ = List(cfg, cwd, now.Add(time.Hour), 0)
	if !list[2].Live || list[2].ID != id2 || list[1].Live {
		t.Fatalf("a running process's session is live, a dead one's not: %+v", list)
	}
	if l, err := List(cfg, "/nowhere", now, 0); err != nil || l != nil {
		t.Fatalf("a project without sessions: %v, %v", l, err)
	}
}

// TestFind: by number, id prefix, title or first-prompt prefix; a bare
// choice only when there is one; ambiguity and no match are errors.
func TestFind(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cfg := project(t, "/w", now)
	list, err := List(cfg, "/w", now, 0)
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{"2": id1, "1111": id1, "fix the": id1, "deploy": id2, "Deploying": id2, id3: id3} {
		s, err := Find(list, arg)
		if err != nil || s.ID != want {
			t.Errorf("Find(%q) = %s, %v; want %s", arg, s.ID, err, want)
		}
	}
	for _, arg := range []string{"", "0", "4", "nothing"} {
		if s, err := Find(list, arg); err == nil {
			t.Errorf("Find(%q) = %s, want an error", arg, s.ID)
		}
	}
	if s, err := Find(list[:1], ""); err != nil || s.ID != id3 {
		t.Errorf("a bare choice of one: %s, %v", s.ID, err)
	}
}

// TestHandBack: a new file is written 0600; the chat's longer transcript
// replaces the one it began from; an equal one is nothing to do; a
// transcript the terminal went on with is never overwritten.
func TestHandBack(t *testing.T) {
	t.Parallel()
	dst := filepath.Join(t.TempDir(), "projects", "-w", id1+".jsonl")
	if ch, err := HandBack([]byte("a\n"), dst); err != nil || !ch {
		t.Fatalf("new: %v %v", ch, err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi, err)
	}
	if ch, err := HandBack([]byte("a\nb\n"), dst); err != nil || !ch {
		t.Fatalf("longer: %v %v", ch, err)
	}
	if ch, err := HandBack([]byte("a\nb\n"), dst); err != nil || ch {
		t.Fatalf("equal: %v %v", ch, err)
	}
	if err := os.WriteFile(dst, []byte("a\nb\nterminal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := HandBack([]byte("a\nb\nchat\n"), dst); !errors.Is(err, ErrDiverged) {
		t.Fatalf("diverged: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "a\nb\nterminal\n" {
		t.Fatalf("the terminal's file was changed: %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dst)); len(ents) != 1 {
		t.Fatalf("left files behind: %v", ents)
	}
}

// TestRename: every occurrence of the old id is the new one.
func TestRename(t *testing.T) {
	t.Parallel()
	b, _ := os.ReadFile(filepath.Join("testdata", "titled.jsonl"))
	out := Rename(b, id1, id2)
	if strings.Contains(string(out), id1) || strings.Count(string(out), id2) != strings.Count(string(b), id1) {
		t.Fatal("not every id renamed")
	}
	if string(Rename(b, "x", id2)) != string(b) {
		t.Fatal("an id of another form renamed")
	}
}

// TestConfigDirFor: CLAUDE_CONFIG_DIR only when it is not the default.
func TestConfigDirFor(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]string{"/home/ann/.claude": "", "/home/ann/.claude/": "", "/srv/ann-claude": "/srv/ann-claude"} {
		if got := ConfigDirFor(dir, "/home/ann/.claude"); got != want {
			t.Errorf("ConfigDirFor(%q) = %q, want %q", dir, got, want)
		}
	}
}
