package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testHistory: ChatHistory lists one chat's entries since a time, oldest
// first, each with its recorded reply (text and time) — none for an entry
// covered by another's reply or dropped unanswered — and whether a turn
// ran for it (a ledger row names it); the thread and the
// limit (the newest) narrow it; it survives a restart.
func testHistory(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.open()
	t0 := e.clk.Now()
	accept := func(chat, thread string, i int) int64 {
		t.Helper()
		in := Msg(i)
		in.ChatID, in.ThreadID = chat, thread
		id := MustAccept(t, s, in)
		e.clk.Advance(time.Second)
		return id
	}
	old := accept("100", "", 0)
	since := e.clk.Now()
	a := accept("100", "", 1)
	b := accept("100", "", 2) // collected into a's turn
	dropped := accept("100", "", 3)
	other := accept("200", "", 4)
	inThread := accept("100", "7", 5)
	for _, id := range []int64{old, a, b, other, inThread} {
		if err := s.Enqueue(ctx, id, "k"); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordReply(ctx, store.Reply{JournalID: old, Text: "old answer", Chunks: []string{"old answer"}}); err != nil {
		t.Fatal(err)
	}
	produced := t0.Add(time.Minute)
	if err := s.RecordReply(ctx, store.Reply{JournalID: a, Covers: []int64{b}, Text: "answer to 1 and 2", Chunks: []string{"answer to 1 and 2"}, ProducedAt: produced,
		Usage: &store.TurnUsage{At: produced, Agent: "main", Instance: "tg", ChatID: "100", Sender: "tg:1", Outcome: "ok"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, store.FinishRequest{IDs: []int64{dropped}, State: store.StateDropped, Reason: "rate limited"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordReply(ctx, store.Reply{JournalID: inThread, Text: "in the thread", Chunks: []string{"in the thread"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = e.open()

	list := func(f store.HistoryFilter, limit int) []store.HistoryEntry {
		t.Helper()
		got, err := s.ChatHistory(ctx, f, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ids := func(h []store.HistoryEntry) []int64 {
		var out []int64
		for _, x := range h {
			out = append(out, x.ID)
		}
		return out
	}
	got := list(store.HistoryFilter{Instance: "tg", ChatID: "100", Since: since}, 0)
	if want := []int64{a, b, dropped, inThread}; !slices.Equal(ids(got), want) {
		t.Fatalf("history ids %v, want %v", ids(got), want)
	}
	if h := got[0]; !h.Replied || h.Reply != "answer to 1 and 2" || !h.RepliedAt.Equal(produced) || !h.Ran || string(h.Message) != `{"text":"m1"}` || h.SessionKey != "k" {
		t.Errorf("a: %+v", h)
	}
	if h := got[1]; h.Replied || h.Ran || h.State != store.StateDone {
		t.Errorf("b (covered): %+v", h)
	}
	if h := got[2]; h.Replied || h.State != store.StateDropped || h.Reason != "rate limited" || h.SessionKey != "" {
		t.Errorf("dropped: %+v", h)
	}
	if all := list(store.HistoryFilter{Instance: "tg", ChatID: "100"}, 0); len(all) != 5 || all[0].ID != old || all[0].Reply != "old answer" {
		t.Errorf("since zero: %v", ids(all))
	}
	// A reply without a ledger row: the host answered, no turn ran.
	if th := list(store.HistoryFilter{Instance: "tg", ChatID: "100", ThreadID: "7"}, 0); !slices.Equal(ids(th), []int64{inThread}) || th[0].Reply != "in the thread" || th[0].Ran {
		t.Errorf("thread 7: %+v", th)
	}
	if last := list(store.HistoryFilter{Instance: "tg", ChatID: "100", Since: since}, 2); !slices.Equal(ids(last), []int64{dropped, inThread}) {
		t.Errorf("limit 2: %v, want the newest two, oldest first", ids(last))
	}
	if none := list(store.HistoryFilter{Instance: "tg", ChatID: "300"}, 0); len(none) != 0 {
		t.Errorf("an unknown chat: %v", ids(none))
	}
	if _, err := s.ChatHistory(ctx, store.HistoryFilter{Instance: "tg"}, 0); err == nil {
		t.Error("a history without a chat was read")
	}
}
