package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/tool"
)

// workspace writes files (name -> content) into a new workspace.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for name, text := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func call(t *testing.T, s *Searcher, ws string, args string) tool.Result {
	t.Helper()
	res, err := s.Call(context.Background(), tool.CallRequest{CallID: "c1", Tool: "search", Arguments: json.RawMessage(args), Workspace: ws, Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSearchRanksPassagesWithFileAndLine: a passage with more and rarer
// query words ranks first; stems match (cats/cat); each hit says its file
// and first line; a heading stays with its text; a repeated call answers
// the same.
func TestSearchRanksPassagesWithFileAndLine(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{
		"MEMORY.md":         "# About Alice\n\nAlice has two cats.\n\n## Work\n\nAlice works on the billing service.\nShe deploys on Fridays.\n",
		"memory/2026-11.md": "Notes of November.\n\nThe billing service moved to the new cluster; the cat food order is monthly.\n\nNothing else.\n",
		"memory/other.txt":  "billing billing billing", // not a .md: not searched
	})
	s := New()
	hits, err := s.Search(context.Background(), ws, "billing cluster", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].File != "memory/2026-11.md" || hits[0].Line != 3 || hits[1].File != "MEMORY.md" || hits[1].Line != 5 {
		t.Fatalf("hits %+v", hits)
	}
	if !strings.HasPrefix(hits[1].Text, "## Work\n\nAlice works") && !strings.HasPrefix(hits[1].Text, "## Work\nAlice works") {
		t.Errorf("the heading is not kept with its text: %q", hits[1].Text)
	}
	res := call(t, s, ws, `{"query":"cat"}`)
	if res.IsError || !strings.Contains(res.Text, "MEMORY.md:1\n# About Alice\nAlice has two cats.") || !strings.Contains(res.Text, "memory/2026-11.md:3") {
		t.Errorf("search cat: %+v", res)
	}
	if again := call(t, s, ws, `{"query":"cat"}`); again.Text != res.Text {
		t.Errorf("a repeated call answered otherwise:\n%s\n%s", res.Text, again.Text)
	}
	if res := call(t, s, ws, `{"query":"zebra"}`); res.IsError || !strings.Contains(res.Text, "Nothing in MEMORY.md or memory/*.md matches") {
		t.Errorf("no match: %+v", res)
	}
	if res := call(t, s, ws, `{"query":"  ** "}`); !res.IsError {
		t.Errorf("a query without words: %+v", res)
	}
	// FTS5 syntax in the model's text is quoted, not run.
	if _, err := s.Search(context.Background(), ws, `billing" OR body:NEAR(x`, 5); err != nil {
		t.Errorf("a query with FTS5 syntax: %v", err)
	}
}

// TestSearchFollowsChanges: a file written after a search is found by the
// next one (its index is rebuilt), and each workspace searches only its
// own files.
func TestSearchFollowsChanges(t *testing.T) {
	t.Parallel()
	a := workspace(t, map[string]string{"MEMORY.md": "Alice likes tea.\n"})
	b := workspace(t, map[string]string{"MEMORY.md": "Bob likes coffee.\n"})
	s := New()
	if hits, _ := s.Search(context.Background(), b, "coffee", 5); len(hits) != 1 {
		t.Errorf("workspace b: %+v", hits)
	}
	if hits, _ := s.Search(context.Background(), a, "coffee", 5); len(hits) != 0 {
		t.Errorf("workspace a found b's coffee: %+v", hits)
	}
	mem := filepath.Join(a, "MEMORY.md")
	if err := os.WriteFile(mem, []byte("Alice likes tea.\n\nAlice now drinks coffee too.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(context.Background(), a, "coffee", 5)
	if err != nil || len(hits) != 1 || hits[0].Line != 3 {
		t.Errorf("after the change: %+v %v", hits, err)
	}
	// Rewritten to the same size within one tick of a coarse clock (the
	// time set back as such a clock leaves it): still found.
	fi, err := os.Stat(mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mem, []byte("Alice likes tea.\n\nAlice now drinks cocoa, too.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(mem, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.Search(context.Background(), a, "cocoa", 5); err != nil || len(hits) != 1 {
		t.Errorf("after a rewrite of the same size and time: %+v %v", hits, err)
	}
}

// TestSearchStaysInTheWorkspace: the agent (inside its sandbox) may make
// MEMORY.md or memory/ a link to a file outside its workspace; the plugin
// (outside the sandbox) does not read through it.
func TestSearchStaysInTheWorkspace(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("the password is hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(ws, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(ws, "memory")); err != nil {
		t.Fatal(err)
	}
	hits, err := New().Search(context.Background(), ws, "password", 5)
	if err != nil || len(hits) != 0 {
		t.Errorf("read through a link out of the workspace: %+v %v", hits, err)
	}
}
