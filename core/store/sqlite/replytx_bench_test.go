package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// BenchmarkRecordReplyWarmTurn is the reply's transaction of a warm turn
// at durability "process" (no fsync): the reply with its session's
// bookkeeping, claude's running total, the usage row and chunk 0's
// attempt, as core/delivery records it. stmts/op counts the statements
// (BEGIN and COMMIT included).
func BenchmarkRecordReplyWarmTurn(b *testing.B) {
	d := openBench(b, Options{Synchronous: "NORMAL"})
	ctx := context.Background()
	if _, err := d.UpdateSession(ctx, "k", func(s *store.Session, _ bool) error { s.ClaudeSessionID = "c1"; return nil }); err != nil {
		b.Fatal(err)
	}
	ids := begunTurns(b, d, b.N)
	u := &store.TurnUsage{Agent: "main", Instance: "tg", ChatID: "5", Sender: "tg:5", Model: "claude-opus-5-5",
		InputTokens: 4426, OutputTokens: 2, CostUSD: 0.017744, Duration: 220 * time.Millisecond, Outcome: "ok"}
	b.ReportAllocs()
	s0 := d.Statements()
	b.ResetTimer()
	for i, id := range ids {
		sess := store.NewPendingSession()
		sess.Set(&store.SessionUpdate{Key: "k", Fn: func(s *store.Session, _ bool) error { s.Turns++; return nil }})
		r := store.Reply{JournalID: id, Instance: "tg", ChatID: "5", Text: "echo: hello", Chunks: []string{"echo: hello"}, Format: "markdown",
			Usage: u, ClaudeCost: &store.ClaudeCost{Key: "k", Of: "c1", USD: float64(i)}, Session: sess.Take(), AttemptFirst: true}
		if err := d.RecordReply(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(d.Statements()-s0)/float64(b.N), "stmts/op")
}
