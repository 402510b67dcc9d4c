package turn

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/runner"
)

// A new session may run on the agent's spare claude (TurnRequest.AdoptSpare), which
// answers under its own session id: the session records that id, so the next turn
// resumes the conversation the spare holds. A turn that did not adopt one keeps the id
// it asked for whatever claude reports.
func TestNewSessionAdoptsTheSpare(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	const spare = "0b4f8f7e-3d1c-4c55-9a5e-7f1b2c3d4e5f"
	f.agent.result = runner.Result{Text: "hello back", SessionID: spare, Wait: runner.Wait{Start: runner.StartSpare}}
	f.turns.Run(context.Background(), f.request("tg", "hi"))
	first := f.agent.reqs[0]
	if !first.NewSession || !first.AdoptSpare || first.SessionID == spare {
		t.Fatalf("first turn: %+v", first)
	}
	s, _ := f.db.Session(context.Background(), testKey.String())
	if s.ClaudeSessionID != spare || s.Turns != 1 {
		t.Fatalf("session after the adopted turn: %+v", s)
	}
	f.agent.result = runner.Result{Text: "again", SessionID: "5d1e7a2b-0000-4000-8000-000000000001", Wait: runner.Wait{Start: runner.StartWarm}}
	f.now = f.now.Add(time.Minute)
	f.turns.Run(context.Background(), f.request("tg", "again"))
	if r := f.agent.reqs[1]; r.NewSession || r.AdoptSpare || r.SessionID != spare {
		t.Fatalf("second turn: %+v", r)
	}
	if s, _ := f.db.Session(context.Background(), testKey.String()); s.ClaudeSessionID != spare {
		t.Fatalf("a warm turn's reported id replaced the session's: %+v", s)
	}
}
