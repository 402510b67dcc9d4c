package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestClaudeHostSpareAdopted (issue 84, goal 2): through the real binary with the real
// CLI, agent.spare on by default. A chat's second new session (/new) repeats the first's
// start, so a spare claude is started after it (the status page counts it); the chat's
// next new session is answered by that spare — the process that answers is the spare's,
// the API sees the spare's session id, the session records it (the follow-up resumes
// the same conversation) — and a replacement is started.
func TestClaudeHostSpareAdopted(t *testing.T) {
	h := startClaudeHost(t, clOptions{status: true})
	const chat = "chat-u1"
	pool := h.warmPool()
	say := func(text string) clRecord {
		t.Helper()
		m := h.mark()
		h.post("u1", text)
		got, _ := h.waitSend(chat, m, 60*time.Second)
		return got
	}
	say("first conversation")
	if p := pool(); p.Spares != 0 {
		t.Fatalf("a spare after the first new session: %+v", p)
	}
	say("/new")
	say("second conversation")
	spare, argv := waitSpare(t, h, pool, 2)
	spareSession := argOf(argv, "--session-id")
	if spareSession == "" {
		t.Fatalf("spare argv %q", argv)
	}
	before := h.fake.Count()
	say("/new")
	got := say("third conversation")
	if !strings.Contains(got.Text, "third conversation") {
		t.Fatalf("reply %q", got.Text)
	}
	r := h.request(before+1, time.Second)
	if s := r.Header.Get("x-claude-code-session-id"); s != spareSession {
		t.Fatalf("the third conversation ran in session %s, the spare's is %s", s, spareSession)
	}
	if !alive(spare) {
		t.Fatalf("the spare %d is gone: it did not answer", spare)
	}
	sdktest.WaitFor(t, "the adoption counted and a replacement spare", func() error {
		p := pool()
		return sdktest.Saw(p.SparesAdopted == 1 && p.Spares == 1, "pool %+v", p)
	})
	// The session recorded the spare's: the follow-up runs on the same process, in
	// the same conversation.
	got = say("and a follow-up")
	if !strings.Contains(got.Text, "and a follow-up") {
		t.Fatalf("follow-up reply %q", got.Text)
	}
	r = h.request(before+2, time.Second)
	if s := r.Header.Get("x-claude-code-session-id"); s != spareSession {
		t.Fatalf("the follow-up ran in session %s, want the spare's %s", s, spareSession)
	}
	if u := r.UserTexts(); len(u) != 2 || !strings.Contains(u[0], "third conversation") {
		t.Fatalf("follow-up request user texts %q", u)
	}
	if !alive(spare) {
		t.Fatal("the adopted spare stopped after one turn")
	}
}

// waitSpare waits for the host's spare claude (the status page counts one, and among
// the claude processes, want in all, the spare is the one whose session the API never
// saw) and returns its pid and argv.
func waitSpare(t *testing.T, h *clHost, pool func() admin.WarmPool, want int) (int, []string) {
	t.Helper()
	var spare int
	sdktest.WaitFor(t, "the spare claude in the warm pool", func() error {
		p := pool()
		pids := h.claudePIDs()
		spare = 0
		if p.Spares == 1 && len(pids) == want {
			asked := map[string]bool{}
			for n := 1; n <= h.fake.Count(); n++ {
				asked[h.request(n, time.Second).Header.Get("x-claude-code-session-id")] = true
			}
			for _, pid := range pids {
				argv := clCmdline(pid)
				if i := slices.Index(argv, "--session-id"); i >= 0 && i+1 < len(argv) && !asked[argv[i+1]] {
					spare = pid
				}
			}
		}
		return sdktest.Saw(spare != 0, "pool %+v, claude processes %v", p, pids)
	})
	return spare, clCmdline(spare)
}

// argOf is the value after flag in argv ("" for none).
func argOf(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// TestClaudeHostSpareNewChat (issue 84, goal 2): with the host's agent tools on (the
// default) and the sandbox off, a brand-new chat's first message runs on the agent's
// spare claude. Two new chats in a row leave a spare started with agent tools of its own
// (a 0600 MCP config naming no chat, its token on no command line); a third person's
// first message is answered by it — the spare's process and session — and the
// schedule_message call it makes lands in that person's chat only.
func TestClaudeHostSpareNewChat(t *testing.T) {
	h := startClaudeHost(t, clOptions{status: true, senders: []string{"u1", "u2", "u3"}, agent: Attrs{"sandbox": "off"}})
	pool := h.warmPool()
	h.ask("u1", "hello from one", 60*time.Second)
	h.ask("u2", "hello from two", 60*time.Second)
	spare, argv := waitSpare(t, h, pool, 3)
	spareSession, mcpFile := argOf(argv, "--session-id"), argOf(argv, "--mcp-config")
	if !strings.HasPrefix(filepath.Base(mcpFile), "mcp-p-") {
		t.Fatalf("the spare's --mcp-config %q is not a process's own (argv %q)", mcpFile, argv)
	}
	fi, err := os.Stat(mcpFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the spare's MCP config %s: %v %v, want mode 0600", mcpFile, fi, err)
	}
	b, _ := os.ReadFile(mcpFile)
	var mc struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &mc); err != nil {
		t.Fatal(err)
	}
	env := mc.MCPServers["clawhost"].Env
	if tok := env["CLAWHOST_AGENT_TOKEN"]; len(tok) < 64 || env["CLAWHOST_AGENT_CHAT"] != "" || strings.Contains(strings.Join(argv, " "), tok) {
		t.Fatalf("the spare's MCP config env %v: want its own token (on no command line) and no chat", env)
	}

	before := h.fake.Count()
	h.fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__schedule_message",
		Input: map[string]any{"in": "2s", "text": "the kettle is on"}}})
	h.fake.Enqueue(anthropictest.Reply{Text: "I will remind you."})
	got, m := h.ask("u3", "remind me about the kettle in two seconds", 60*time.Second)
	if got.Text != "I will remind you." {
		t.Fatalf("reply %q", got.Text)
	}
	if s := h.request(before+1, time.Second).Header.Get("x-claude-code-session-id"); s != spareSession {
		t.Fatalf("the new chat ran in session %s, the spare's is %s", s, spareSession)
	}
	if res := h.request(before+2, time.Second).LastUserText(); !strings.Contains(res, "Scheduled for") {
		t.Fatalf("tool result %q", res)
	}
	if !alive(spare) {
		t.Fatalf("the spare %d is gone: it did not answer", spare)
	}
	got, _ = h.waitSend("chat-u3", m, 30*time.Second)
	if !strings.Contains(got.Text, "the kettle is on") {
		t.Fatalf("scheduled turn's reply %q", got.Text)
	}
	for _, other := range []string{"chat-u1", "chat-u2"} {
		if s := h.sends(other, m); len(s) != 0 {
			t.Fatalf("the new chat's schedule reached %s: %+v", other, s)
		}
	}
	// (The scheduled turn is a new session too, and may adopt the replacement.)
	sdktest.WaitFor(t, "the adoption counted and a replacement spare", func() error {
		p := pool()
		return sdktest.Saw(p.SparesAdopted >= 1 && p.Spares == 1, "pool %+v", p)
	})
}
