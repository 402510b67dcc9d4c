package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
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
	cfg, diags := config.Load(h.cfgPath)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pool := func() admin.WarmPool {
		snap, err := fetchStatus(cfg)
		if err != nil || snap.WarmPool == nil {
			return admin.WarmPool{}
		}
		return *snap.WarmPool
	}
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
	var spare int
	sdktest.WaitFor(t, "the spare claude in the warm pool", func() error {
		p := pool()
		pids := h.claudePIDs()
		if p.Spares == 1 && len(pids) == 2 {
			// The spare is the one whose session the API never saw.
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
		return sdktest.Saw(p.Spares == 1 && spare != 0, "pool %+v, claude processes %v", p, pids)
	})
	argv := clCmdline(spare)
	i := slices.Index(argv, "--session-id")
	if i < 0 || i+1 >= len(argv) {
		t.Fatalf("spare argv %q", argv)
	}
	spareSession := argv[i+1]
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
