package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// TestUsageLimitWaitedOut: through the real binary and the real claude CLI
// logged in with a subscription (an OAuth token) against the fake API,
// which answers 429 with the anthropic-ratelimit-unified-* headers until a
// reset 10 s ahead: Alice's message hits the limit and parks; Bob's,
// Carol's and Alice's second wait; each chat is told once; the host is
// killed (-9) while they are parked and started again; at the reset every
// message is answered exactly once, Alice's in order, and none reached
// claude before it but the first.
func TestUsageLimitWaitedOut(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	var mu sync.Mutex
	var reset time.Time // 20 s after the first request (claude's start takes seconds on a busy machine)
	var early []string  // prompts that reached the API before the reset
	resetAt := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return reset
	}
	fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		mu.Lock()
		if reset.IsZero() {
			reset = time.Now().Add(20 * time.Second).Truncate(time.Second)
		}
		before := time.Now().Before(reset)
		if before {
			early = append(early, r.LastUserText())
		}
		reset := reset
		mu.Unlock()
		if before {
			at := fmt.Sprint(reset.Unix())
			return anthropictest.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "usage limit", Headers: map[string]string{
				"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": at,
				"anthropic-ratelimit-unified-representative-claim": "five_hour",
				"anthropic-ratelimit-unified-5h-status":            "rejected", "anthropic-ratelimit-unified-5h-reset": at,
			}}
		}
		return anthropictest.Reply{} // echo
	})
	agent := rig.agent(Attrs{"timeout": "60s"})
	delete(agent.Env, "ANTHROPIC_API_KEY")
	agent.Env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-fake"
	d := rig.start(t, Host{
		Agent:  agent,
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1002", "tg:1003"}},
	})
	chats := map[string]int64{"Alice": 1001, "Bob": 1002, "Carol": 1003}
	push := func(who, text string) {
		srv.PushText(telegramtest.PrivateChat(chats[who]), tgUser(chats[who], who), text)
	}
	const told = "usage limit is reached"
	push("Alice", "first question")
	tgWaitMessage(t, srv, 1001, told)
	push("Bob", "bob question")
	push("Carol", "carol question")
	push("Alice", "second question")
	tgWaitMessage(t, srv, 1002, told)
	tgWaitMessage(t, srv, 1003, told)

	// kill -9 while parked, and start again.
	if reset := resetAt(); time.Now().After(reset.Add(-3 * time.Second)) {
		t.Fatalf("too slow: the reset (%s) is near before the kill", reset.Format(time.TimeOnly))
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.spawn()

	for who, want := range map[string]string{"Alice": "first question", "Bob": "bob question", "Carol": "carol question"} {
		tgWaitMessage(t, srv, chats[who], "echo:", want)
	}
	tgWaitMessage(t, srv, 1001, "echo:", "second question")
	tgSettle(t, srv, time.Second)
	for who, id := range chats {
		if n := tgCount(srv, id, told); n != 1 {
			t.Errorf("%s was told %d times", who, n)
		}
	}
	for who, texts := range map[string][]string{"Alice": {"first question", "second question"}, "Bob": {"bob question"}, "Carol": {"carol question"}} {
		var echoes []string
		for _, m := range tgChat(srv, chats[who]) {
			if strings.Contains(m.Visible, "echo:") {
				echoes = append(echoes, m.Visible)
			}
		}
		if len(echoes) != len(texts) {
			t.Errorf("%s got %d answers, want %d: %q", who, len(echoes), len(texts), echoes)
			continue
		}
		for i, w := range texts {
			if !strings.Contains(echoes[i], w) {
				t.Errorf("%s's answer %d is %q, want the one to %q", who, i, echoes[i], w)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) != 1 || !strings.Contains(early[0], "first question") {
		t.Errorf("before the reset the API saw %q; want only the first question", early)
	}
}
