package turn

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
)

// TestSendFileGoesWithTheReply: files the agent's send_file queued while
// its turn ran go out with the turn's final reply as MEDIA: lines (the
// outbox records them), each once and with its caption; a path the check
// refuses is an error the tool reports; with no turn running in the chat
// the call is refused.
func TestSendFileGoesWithTheReply(t *testing.T) {
	f := newFixture(t, Settings{})
	tgt := message.Target{Instance: "tg", ChatID: "5"}
	if _, err := f.turns.AttachFile(tgt, "a.txt", ""); !errors.Is(err, ErrNoTurn) {
		t.Errorf("with no turn: %v", err)
	}
	var errs []error
	f.agent.onRun = func() {
		for _, c := range []struct{ path, caption string }{{"report.pdf", "The report"}, {"report.pdf", ""}, {"../etc/passwd", ""}, {"out/plot.png", ""}} {
			_, err := f.turns.AttachFile(tgt, c.path, c.caption)
			errs = append(errs, err)
		}
	}
	f.turns.Run(context.Background(), f.request("tg", "send me the report"))
	if errs[0] != nil || errs[1] != nil || errs[3] != nil || errs[2] == nil || !strings.Contains(errs[2].Error(), "passwd was not sent: it is outside the workspace") {
		t.Errorf("tool answers: %v", errs)
	}
	if len(f.out.replies) != 1 {
		t.Fatalf("replies %+v", f.out.replies)
	}
	if got, want := f.out.replies[0].Text, "hello back\n\nThe report\nMEDIA:/ws/report.pdf\nMEDIA:/ws/out/plot.png"; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	if _, err := f.turns.AttachFile(tgt, "late.txt", ""); !errors.Is(err, ErrNoTurn) {
		t.Errorf("after the turn: %v", err)
	}
}

// TestReactToTheMessage: the react tool sets the bot's reaction on the
// message the running turn answers, at once and not as a reply; with no
// turn running in the chat it is refused.
func TestReactToTheMessage(t *testing.T) {
	f := newFixture(t, Settings{})
	tgt := message.Target{Instance: "tg", ChatID: "5"}
	if err := f.turns.ReactTo(tgt, "👍"); !errors.Is(err, ErrNoTurn) {
		t.Errorf("with no turn: %v", err)
	}
	var err error
	f.agent.onRun = func() { err = f.turns.ReactTo(tgt, " 👀 ") }
	req := f.request("tg", "look at this")
	f.turns.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	f.out.mu.Lock()
	defer f.out.mu.Unlock()
	if !slices.Contains(f.out.sent, "react m1 👀") {
		t.Errorf("sent %q, want the reaction on m1", f.out.sent)
	}
	if len(f.out.replies) != 1 || strings.Contains(f.out.replies[0].Text, "👀") {
		t.Errorf("replies %+v", f.out.replies)
	}
}

// TestReplyCarriesTheTurnsUsage: a turn's reply carries its usage ledger
// row — who asked, in which chat, the model, tokens and the turn's own
// cost, how it ended.
func TestReplyCarriesTheTurnsUsage(t *testing.T) {
	f := newFixture(t, Settings{})
	f.agent.result = runner.Result{Text: "done", Model: "claude-opus-4", Usage: runner.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadInputTokens: 300,
		CostUSD: 0.042, PerTurnCost: true, SessionCostUSD: 0.042}}
	f.turns.Run(context.Background(), f.request("tg", "how much?"))
	if len(f.out.replies) != 1 || f.out.replies[0].Usage == nil {
		t.Fatalf("replies %+v", f.out.replies)
	}
	u := *f.out.replies[0].Usage
	if u.Instance != "tg" || u.ChatID != "5" || u.Sender != "tg:5" || u.Model != "claude-opus-4" || u.InputTokens != 1200 ||
		u.OutputTokens != 80 || u.CacheReadTokens != 300 || u.CostUSD != 0.042 || u.Outcome != "ok" || u.Estimate {
		t.Errorf("usage %+v", u)
	}
}
