package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/core/internal/procmem"
)

// TestClaudeWarmMemory: with agent.warm_memory room for one real claude
// (~200 MB measured), a second chat's claude stops the first chat's idle
// one, so the host keeps one warm where max_warm alone would keep both; the
// first chat, returning, resumes its session (--resume, its earlier turn in
// the request) in a new process, and /status says why claude was started.
func TestClaudeWarmMemory(t *testing.T) {
	h := startClaudeHost(t, clOptions{senders: []string{"u1", "u2"}, agent: Attrs{"warm_memory": "300MB", "max_warm": 4}})

	h.fake.Enqueue(anthropictest.Reply{Text: "Hello Alice."})
	m := h.mark()
	h.post("u1", "my name is Alice")
	if got, _ := h.waitSend("chat-u1", m, 60*time.Second); got.Text != "Hello Alice." {
		t.Fatalf("first reply %q", got.Text)
	}
	sid := h.request(1, time.Second).Header.Get("x-claude-code-session-id")
	alice := h.claudePIDs()
	if len(alice) != 1 {
		t.Fatalf("claude processes after the first turn: %v", alice)
	}
	if pss, ok := procmem.Tree(alice[0]); ok {
		t.Logf("a warm claude holds %d MB (Pss of its tree)", pss>>20)
	}

	// Bob's claude does not fit beside Alice's: hers is stopped.
	m = h.mark()
	h.post("u2", "hi, I am Bob")
	if got, _ := h.waitSend("chat-u2", m, 60*time.Second); !strings.Contains(got.Text, "hi, I am Bob") {
		t.Fatalf("Bob's reply %q", got.Text)
	}
	waitExit(t, alice[0], 20*time.Second)
	bob := h.claudePIDs()
	if len(bob) != 1 || bob[0] == alice[0] {
		t.Fatalf("claude processes after Bob's turn: %v (Alice's was %d): want Bob's alone", bob, alice[0])
	}

	// Alice returns: her session resumes in a new process, Bob's makes room.
	m = h.mark()
	h.post("u1", "what is my name?")
	if got, _ := h.waitSend("chat-u1", m, 60*time.Second); !strings.Contains(got.Text, "what is my name?") {
		t.Fatalf("Alice's second reply %q", got.Text)
	}
	r := h.request(3, time.Second)
	if s := r.Header.Get("x-claude-code-session-id"); s != sid {
		t.Fatalf("Alice's returning turn ran in session %q, her first in %q", s, sid)
	}
	if u := r.UserTexts(); len(u) != 2 || !clContainsInOrder(u, "my name is Alice", "what is my name?") {
		t.Fatalf("Alice's returning request: user texts %q, want her first turn before it", u)
	}
	waitExit(t, bob[0], 20*time.Second)
	now := h.claudePIDs()
	if len(now) != 1 || slices.Contains(alice, now[0]) {
		t.Fatalf("claude processes after Alice returned: %v", now)
	}
	if argv := clCmdline(now[0]); !slices.Contains(argv, "--resume") || !slices.Contains(argv, sid) {
		t.Fatalf("Alice's new claude was not started with --resume %s: %q", sid, argv)
	}
	m = h.mark()
	h.post("u1", "/status")
	got, _ := h.waitSend("chat-u1", m, 30*time.Second)
	if !strings.Contains(got.Text, "stopped the idle one of") || !strings.Contains(got.Text, "of 300 MB") {
		t.Fatalf("/status does not say Bob's claude was stopped for the budget:\n%s", got.Text)
	}
	for _, l := range strings.Split(got.Text, "\n") {
		if strings.HasPrefix(l, "Last turn:") {
			t.Log(l)
		}
	}
}

// waitExit waits until process pid has ended (a pidfd becomes readable when
// it exits), at most within.
func waitExit(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // already gone
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(within)
	for {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			t.Fatalf("poll pidfd of %d: %v", pid, err)
		case n == 0:
			t.Fatalf("claude pid %d still running after %v", pid, within)
		}
		return
	}
}
