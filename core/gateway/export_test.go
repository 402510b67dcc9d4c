package gateway

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestInProcessExport: an owner's /export in a group sends one file built
// from the journal although claude left no transcript (the scripted agent
// writes none): each message with its sender and time, claude's replies,
// the host's answers marked as such (a budget's refusal, the flood
// limit's notice), the message refused without a notice marked refused,
// in the order they came.
func TestInProcessExport(t *testing.T) {
	g, ports, agent := inproc(t, func(s *Settings) {
		s.Access = access.Policy{DMPolicy: access.PolicyAllowlist, Owners: []string{"tg:9"}, GroupPolicy: access.PolicyAllowlist,
			Groups: []string{"tg:-100"}, GroupAllowFrom: []string{"tg:*"}}
		s.Budgets = budget.Rules{Top: &config.Budget{PerSenderDailyUSD: 0.5}}
		s.Rate = Rate{N: 2, Per: time.Minute}
	})
	agent.cost, agent.whole = 0.5, true
	ctx := context.Background()
	seen := 0
	say := func(who, text string) {
		t.Helper()
		if err := g.Inbound(ctx, "tg", []channel.InboundMessage{groupFrom(who, text)}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want string) {
		t.Helper()
		if got := ports.next(t, "-100", &seen); !strings.Contains(got, want) {
			t.Fatalf("sent %q, want it to hold %q", got, want)
		}
	}
	say("5", "one")
	expect("one")
	say("5", "two")
	expect("Not run: your daily budget is spent")
	say("5", "three")
	expect("faster than this bot takes them")
	say("5", "four")
	for deadline := time.Now().Add(10 * time.Second); ; {
		open, err := g.store.ListUnfinished(ctx, 0, 0)
		if err == nil && len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entries still open: %d, %v", len(open), err)
		}
		time.Sleep(time.Millisecond) // polls the journal the arrival writes
	}
	say("6", "bob here")
	expect("bob here")
	say("9", "/export")
	expect("This session as Markdown")
	var files []string
	ports.mu.Lock()
	for _, r := range ports.sent {
		for _, m := range r.Media {
			files = append(files, m.Path)
		}
	}
	ports.mu.Unlock()
	if len(files) != 1 {
		t.Fatalf("%d files sent, want 1", len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	want := []string{
		"not found, so tool steps are not shown",
		"## User 5 (tg:5) · ", "\n\none\n\n**claude** · ", "re: ",
		"## User 5 (tg:5) · ", "\n\ntwo\n\n**clawhost** (answered by the host; claude did not see it) · ", "Not run: your daily budget is spent",
		"## User 5 (tg:5) · ", "\n\nthree\n\n**clawhost** (answered by the host; claude did not see it) · ", "faster than this bot takes them",
		" · refused: rate limited\n\nfour\n\n",
		"## User 6 (tg:6) · ", "\n\nbob here\n\n**claude** · ", "re: ",
	}
	last := 0
	for _, w := range want {
		i := strings.Index(got[last:], w)
		if i < 0 {
			t.Fatalf("the export lacks (in order) %q:\n%s", w, got)
		}
		last += i + len(w)
	}
	if n := strings.Count(got, "**claude**"); n != 2 {
		t.Errorf("claude answered %d times in the export, want 2:\n%s", n, got)
	}
}
