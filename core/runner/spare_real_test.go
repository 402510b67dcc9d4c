package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// The real CLI answers a spare's priming (initialize, then get_context_usage) and the
// priming leaves nothing in the session a chat adopts: the API request of the adopting
// chat's first prompt carries the same messages as the first request of a claude
// started for a chat of its own (its prompt and claude's own reminders), and no
// request to the API was made before any chat adopted the spare.
func TestRealSparePrimingLeavesTheSessionClean(t *testing.T) {
	t.Parallel()
	e := newReal(t, func(c *Config) { c.Spare, c.Sandbox, c.WarmMemory = true, SandboxOff, NoWarmMemoryLimit })
	ready := make(chan *proc, 4)
	e.r.mu.Lock()
	e.r.spares.ready = func(p *proc) { ready <- p }
	e.r.mu.Unlock()
	newChat := func(key string, spare bool) TurnRequest {
		return TurnRequest{Key: key, SessionID: uuid.NewString(), NewSession: true, AdoptSpare: spare, Prompt: "hello", MediaDir: "m-" + key}
	}
	mustOK(t, runTurn(t, e.r, newChat("a", true)), "echo: hello")
	mustOK(t, runTurn(t, e.r, newChat("b", true)), "echo: hello")
	var sp *proc
	select {
	case sp = <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("no spare came")
	}
	if sp == nil || sp.primed != 2 {
		t.Fatalf("the spare: %+v; want both priming requests answered", sp)
	}
	before := e.fake.Count()

	spared := runTurn(t, e.r, newChat("c", true))
	mustOK(t, spared, "echo: hello")
	if spared.Wait.Start != StartSpare || spared.PID != sp.pid {
		t.Fatalf("new chat: start %q pid %d, the spare %d", spared.Wait.Start, spared.PID, sp.pid)
	}
	reqs := e.fake.Requests()
	if len(reqs) != before+1 {
		t.Fatalf("%d API requests for the adopting chat's first prompt, want 1", len(reqs)-before)
	}
	onSpare := reqs[before]

	e.r.Stop("c")
	own := runTurn(t, e.r, newChat("d", false))
	mustOK(t, own, "echo: hello")
	if own.Wait.Start == StartSpare {
		t.Fatal("the chat of its own adopted a spare")
	}
	var fresh *anthropictest.Request
	for _, r := range e.fake.Requests()[before+1:] {
		if strings.Contains(messagesOf(r), "hello") {
			fresh = r
		}
	}
	if fresh == nil {
		t.Fatal("no API request for the chat of its own")
	}
	if got, want := messagesOf(onSpare), messagesOf(fresh); got != want {
		t.Fatalf("the adopting chat's first request carries\n%s\nwant, as a claude of its own sends,\n%s", got, want)
	}
}

// messagesOf is r's conversation as role: block lines, each block's text.
func messagesOf(r *anthropictest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		for _, bl := range m.Content {
			b.WriteString(m.Role + " " + bl.Type + ": " + bl.Text + "\n")
		}
	}
	return b.String()
}
