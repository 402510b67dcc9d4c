package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWrite: with nothing from the journal (pruned), the transcript's
// prompts, answers and tool steps in order;
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
	n, err := Write(&b, Session{Key: "agent:main:tg:direct:5", ClaudeSessionID: id, Turns: 2, CostUSD: 0.031, Model: "opus"}, nil, p, time.UTC)
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
	if n, err := Write(&b, Session{Key: "k"}, nil, "", time.UTC); err != nil || n != 0 || !strings.Contains(b.String(), "not found") {
		t.Errorf("without a transcript: %d %v %q", n, err, b.String())
	}
}

// TestWriteFromTheJournal: the journal's messages (sender, time, the
// refused one marked) and replies (claude's, and the host's marked as
// such), with the transcript's tool steps between a message and its reply
// by time; without a transcript the messages and replies are all there
// and the file says the steps are missing.
func TestWriteFromTheJournal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"type":"user","timestamp":"2026-11-25T10:00:01Z","message":{"role":"user","content":"[Telegram Alice] list the files"}}`,
		`{"type":"assistant","timestamp":"2026-11-25T10:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","name":"Bash","input":{"command":"ls -la"}}]}}`,
		`{"type":"assistant","isSidechain":true,"timestamp":"2026-11-25T10:00:02Z","message":{"role":"assistant","content":[{"type":"tool_use","name":"Grep","input":{"pattern":"secret"}}]}}`,
		`{"type":"assistant","timestamp":"2026-11-25T10:03:02Z","message":{"role":"assistant","content":[{"type":"tool_use","name":"Read","input":{"file_path":"/w/a.go"}}]}}`,
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(min, sec int) time.Time { return time.Date(2026, 11, 25, 10, min, sec, 0, time.UTC) }
	msgs := []Message{
		{At: at(0, 0), From: "Alice (tg:5)", Text: "list the files", Reply: "There is a.go.", ReplyAt: at(0, 4)},
		{At: at(1, 0), From: "Bob (tg:6)", Text: "spam", Refused: "refused: rate limited"},
		{At: at(2, 0), From: "Carol (tg:7)", Text: "/usage", Reply: "Usage: $0.10", ReplyAt: at(2, 0), ByHost: true},
		{At: at(3, 0), From: "Alice (tg:5)", Text: "read a.go", Reply: "It is empty.", ReplyAt: at(3, 5)},
	}
	var b strings.Builder
	n, err := Write(&b, Session{Key: "agent:main:tg:group:-5", ClaudeSessionID: "s"}, msgs, p, time.UTC)
	if err != nil || n != 4 {
		t.Fatalf("Write: %d, %v", n, err)
	}
	got := b.String()
	inOrder(t, got, "# Session agent:main:tg:group:-5", "journal (messages and replies) and claude's transcript (tool steps)",
		"## Alice (tg:5) · 2026-11-25 10:00\n\nlist the files", "- 🔧 Bash: `ls -la`", "**claude** · 10:00\n\nThere is a.go.",
		"## Bob (tg:6) · 2026-11-25 10:01 · refused: rate limited\n\nspam",
		"## Carol (tg:7) · 2026-11-25 10:02\n\n/usage", "**clawhost** (answered by the host; claude did not see it) · 10:02\n\nUsage: $0.10",
		"## Alice (tg:5) · 2026-11-25 10:03\n\nread a.go", "- 🔧 Read: `/w/a.go`", "**claude** · 10:03\n\nIt is empty.")
	for _, no := range []string{"Looking.", "Grep", "[Telegram Alice]"} {
		if strings.Contains(got, no) {
			t.Errorf("%q in the export (the replies are the journal's; no subagent steps):\n%s", no, got)
		}
	}

	b.Reset()
	if n, err := Write(&b, Session{Key: "k"}, msgs, "", time.UTC); err != nil || n != 4 {
		t.Fatalf("Write without a transcript: %d, %v", n, err)
	}
	got = b.String()
	inOrder(t, got, "not found, so tool steps are not shown", "list the files", "There is a.go.", "refused: rate limited", "It is empty.")
	if strings.Contains(got, "🔧") {
		t.Errorf("tool steps without a transcript:\n%s", got)
	}
}

// inOrder fails unless each of want is in got after the one before.
func inOrder(t *testing.T, got string, want ...string) {
	t.Helper()
	last := 0
	for _, w := range want {
		i := strings.Index(got[last:], w)
		if i < 0 {
			t.Fatalf("missing (in order) %q in:\n%s", w, got)
		}
		last += i + len(w)
	}
}
