package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// TestReloadReachesWarmClaude: a reload applies agent.model and a system prompt read from
// clawhost.env to the next turn of a chat whose claude is warm — the request at the API
// names the new model and carries the new prompt, in the same claude session — without a
// restart of clawhost. Before, the warm process (and every new one) kept the model the host
// started with, and a variable added to clawhost.env was not seen.
func TestReloadReachesWarmClaude(t *testing.T) {
	h := startClaudeHost(t, clOptions{
		agent: Attrs{"model": "claude-one", "system_prompt": Expr(`env("BOT_PROMPT", "no prompt yet")`)},
	})
	const chat = "chat-u1"
	h.fake.Enqueue(anthropictest.Reply{Text: "first answer"})
	m := h.mark()
	h.post("u1", "hello")
	if got, next := h.waitSend(chat, m, 60*time.Second); got.Text != "first answer" {
		t.Fatalf("first reply %q", got.Text)
	} else {
		m = next
	}
	r1 := h.request(1, time.Second)
	if r1.Model != "claude-one" || !strings.Contains(r1.SystemText(), "no prompt yet") {
		t.Fatalf("first request: model %q, system prompt without the default", r1.Model)
	}
	warm := h.claudePIDs()

	editFile(t, h.cfgPath, `"claude-one"`, `"claude-two"`)
	if err := os.WriteFile(filepath.Join(h.dir, "clawhost.env"), []byte("BOT_PROMPT=Answer like a pirate.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !waitLog(ctx, h.log.String, "configuration reloaded") {
		t.Fatalf("no reload in the log:\n%s", h.log.String())
	}
	for _, l := range strings.Split(h.log.String(), "\n") {
		if strings.Contains(l, "configuration reloaded") && !strings.Contains(l, "agent.model") {
			t.Errorf("the SIGHUP's log line does not name agent.model among the changes: %s", l)
		}
	}

	h.fake.Enqueue(anthropictest.Reply{Text: "second answer"})
	h.post("u1", "again")
	if got, _ := h.waitSend(chat, m, 60*time.Second); got.Text != "second answer" {
		t.Fatalf("second reply %q", got.Text)
	}
	r2 := h.request(2, time.Second)
	if r2.Model != "claude-two" {
		t.Errorf("the turn after the reload asked for model %q, want claude-two", r2.Model)
	}
	if !strings.Contains(r2.SystemText(), "Answer like a pirate.") {
		t.Errorf("the turn after the reload lacks the prompt from clawhost.env")
	}
	if s1, s2 := r1.Header.Get("x-claude-code-session-id"), r2.Header.Get("x-claude-code-session-id"); s1 != s2 {
		t.Errorf("the conversation changed claude session across the reload: %s → %s", s1, s2)
	}
	if u := r2.UserTexts(); len(u) != 2 {
		t.Errorf("the turn after the reload lost the history: %q", u)
	}
	if now := h.claudePIDs(); len(now) != 1 || len(warm) != 1 || now[0] == warm[0] {
		t.Errorf("claude processes %v → %v: want the warm one replaced by one with the new settings", warm, now)
	}
}

// waitLog waits until log() contains want, polling on a short tick until ctx ends; it
// reports whether it did.
func waitLog(ctx context.Context, log func() string, want string) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(log(), want) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}
