package turn

import (
	"context"
	"slices"
	"testing"

	"github.com/clawhost/clawhost/core/session"
)

// TestAdoptAnOwnersSession: /continue's Adopt makes the given claude
// session current — the next turn resumes it (not a new session), the
// warm process is retired first — keeps the chat's session and its name
// as an earlier one, and records where the session came from; the next
// /new forgets that.
func TestAdoptAnOwnersSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	ctx := context.Background()
	key := testKey.String()
	f.turns.Run(ctx, f.request("tg", "first"))
	own := f.agent.reqs[0].SessionID
	if _, err := f.turns.meta().Update(ctx, f.db, key, func(m *session.Meta) error { m.Name = "mine"; return nil }); err != nil {
		t.Fatal(err)
	}
	const terminal = "11111111-2222-4333-8444-555555555555"
	if err := f.turns.Adopt(ctx, key, terminal, 7, func(m *session.Meta) { m.ContinuedFrom, m.Takeover = terminal, true }); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.agent.stopped, key) {
		t.Error("the warm process was not retired")
	}
	s, _ := f.db.Session(ctx, key)
	meta := storedMeta(s)
	if s.ClaudeSessionID != terminal || s.Turns != 7 || meta.ContinuedFrom != terminal || !meta.Takeover || meta.Name != "" {
		t.Fatalf("adopted: %+v %+v", s, meta)
	}
	if len(meta.Past) != 1 || meta.Past[0].ID != own || meta.Past[0].Name != "mine" {
		t.Fatalf("the chat's own session is not kept as an earlier one: %+v", meta.Past)
	}
	f.turns.Run(ctx, f.request("tg", "go on"))
	if r := f.agent.reqs[1]; r.SessionID != terminal || r.NewSession {
		t.Errorf("the next turn: %+v, want a resume of %s", r, terminal)
	}
}
