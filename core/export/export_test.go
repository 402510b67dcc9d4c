package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWrite: the transcript's prompts, answers and tool steps in order;
// tool results, system reminders, sidechains and the CLI's bookkeeping
// lines are left out.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	id := "8a6361f9-7507-4e2b-9072-6301d8cbbc47"
	p := filepath.Join(dir, "projects", "-work", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-25T03:21:57.504Z"}`,
		`{"type":"user","timestamp":"2026-11-25T10:00:00Z","message":{"role":"user","content":"[Telegram Alice] list the files"}}`,
		`{"type":"assistant","timestamp":"2026-11-25T10:00:02Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Looking."},{"type":"tool_use","name":"Bash","input":{"command":"ls -la"}}]}}`,
		`{"type":"user","timestamp":"2026-11-25T10:00:03Z","message":{"role":"user","content":[{"type":"tool_result","content":"a.go"}]}}`,
		`{"type":"user","isSidechain":true,"timestamp":"2026-11-25T10:00:03Z","message":{"role":"user","content":"subagent prompt"}}`,
		`{"type":"assistant","timestamp":"2026-11-25T10:00:04Z","message":{"role":"assistant","content":[{"type":"text","text":"There is a.go."}]}}`,
		`{"type":"user","timestamp":"2026-11-25T10:05:00Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"thanks"}]}}`,
		`not json`,
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := FindTranscript([]string{"", filepath.Join(dir, "nope"), dir}, id)
	if err != nil || found != p {
		t.Fatalf("FindTranscript: %q, %v", found, err)
	}
	if _, err := FindTranscript([]string{dir}, "../x"); err == nil {
		t.Error("an id with a slash was looked for")
	}
	var b strings.Builder
	n, err := Write(&b, Session{Key: "agent:main:tg:direct:5", ClaudeSessionID: id, Turns: 2, CostUSD: 0.031, Model: "opus"}, p, time.UTC)
	if err != nil || n != 2 {
		t.Fatalf("Write: %d prompts, %v", n, err)
	}
	got := b.String()
	want := []string{"# Session agent:main:tg:direct:5", "turns: 2, cost $0.03", "## Message · 10:00\n\n[Telegram Alice] list the files",
		"**claude** · 10:00\n\nLooking.", "- 🔧 Bash: `ls -la`", "There is a.go.", "## Message · 10:05\n\nthanks"}
	last := 0
	for _, w := range want {
		i := strings.Index(got[last:], w)
		if i < 0 {
			t.Fatalf("missing (in order) %q in:\n%s", w, got)
		}
		last += i
	}
	for _, no := range []string{"a.go\n", "subagent", "system-reminder", "hm"} {
		if strings.Contains(got, no) && no != "a.go\n" {
			t.Errorf("%q in the export", no)
		}
	}
	b.Reset()
	if n, err := Write(&b, Session{Key: "k"}, "", time.UTC); err != nil || n != 0 || !strings.Contains(b.String(), "not found") {
		t.Errorf("without a transcript: %d %v %q", n, err, b.String())
	}
}
