package turn

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// cardDraft records what a turn shows in its draft.
type cardDraft struct {
	mu      sync.Mutex
	cards   []string // each card's text, its buttons' ids after " | "
	updates []string
	finals  []string
	id      string
	shown   chan string
}

func newCardDraft() *cardDraft { return &cardDraft{shown: make(chan string, 16)} }

func (d *cardDraft) Card(text string, _ channel.Format, buttons [][]channel.Button) {
	var ids []string
	for _, r := range buttons {
		for _, b := range r {
			ids = append(ids, b.ID)
		}
	}
	c := text + " | " + strings.Join(ids, ",")
	d.mu.Lock()
	d.cards, d.id = append(d.cards, c), "c1"
	d.mu.Unlock()
	d.shown <- c
}
func (d *cardDraft) Update(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.updates = append(d.updates, text)
}
func (d *cardDraft) Stop()                            {}
func (d *cardDraft) Interrupted(string)               {}
func (d *cardDraft) Fits(string, channel.Format) bool { return true }
func (d *cardDraft) MessageID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.id
}
func (d *cardDraft) TakeFirst(string) (string, bool) { return d.MessageID(), d.MessageID() != "" }
func (d *cardDraft) Final(text string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.finals = append(d.finals, text)
	return d.id != ""
}

func (d *cardDraft) next(t *testing.T) string {
	t.Helper()
	select {
	case c := <-d.shown:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no card was shown")
		return ""
	}
}

// showsWithin advances clk a card tick at a time, at most 20, until a
// card shown contains want; it reports whether one did.
func (d *cardDraft) showsWithin(clk *tstimetest.Fake, want string) bool {
	for range 20 {
		select {
		case c := <-d.shown:
			if strings.Contains(c, want) {
				return true
			}
		case <-time.After(time.Second): // the card is unchanged until its next tick
		}
		clk.Advance(cardTick)
	}
	return false
}

// cardFixture is a turn fixture on a fake clock where 2 messages wait and
// the channel edits messages; with changes the options further.
func cardFixture(t *testing.T, set Settings, with ...func(*Options)) (*fixture, *tstimetest.Fake, *cardDraft) {
	clk := tstimetest.NewFake(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	set.TurnCard = true
	f := newFixtureWith(t, set, func(o *Options) {
		o.Clock, o.Now = clk, clk.Now
		o.Waiting = func(sessionkey.Key) int { return 2 }
		for _, w := range with {
			w(o)
		}
	})
	f.out.edits = true
	d := newCardDraft()
	f.out.draft = d
	return f, clk, d
}

// runFor makes the fake agent's turn take d of fake time, showing the
// cards it should on the way.
func runFor(t *testing.T, f *fixture, clk *tstimetest.Fake, d *cardDraft, cards *[]string, dur time.Duration) {
	f.agent.onRun = func() {
		if !clk.BlockUntil(1, 5*time.Second) {
			t.Error("the card's timer was never armed")
			return
		}
		clk.Advance(cardDelay)
		*cards = append(*cards, d.next(t))
		if dur > cardDelay {
			clk.Advance(dur - cardDelay)
			*cards = append(*cards, d.next(t))
		}
	}
}

// TestTurnCardShowsTheTurn: a turn that runs past cardDelay shows a card
// with the time, what waits behind it and a Stop button, updated as it
// runs; its answer goes into the card (the reply takes the draft) and,
// after a turn longer than ping_after, the reply carries the ping.
func TestTurnCardShowsTheTurn(t *testing.T) {
	t.Parallel()
	f, clk, d := cardFixture(t, Settings{Streaming: StreamOff, PingAfter: 30 * time.Second})
	var cards []string
	runFor(t, f, clk, d, &cards, 43*time.Second)
	f.agent.result = runner.Result{Text: "All done."}
	f.turns.Run(context.Background(), f.request("tg", "refactor the queue"))
	want := []string{
		"⏳ Working · 0s\nthinking…\n2 messages wait behind this one. | /stop",
		"⏳ Working · 40s\nthinking…\n2 messages wait behind this one. | /stop",
	}
	if strings.Join(cards, "\n---\n") != strings.Join(want, "\n---\n") {
		t.Errorf("cards:\n%s\nwant:\n%s", strings.Join(cards, "\n---\n"), strings.Join(want, "\n---\n"))
	}
	if len(f.out.replies) != 1 || f.out.replies[0].Text != "All done." || f.out.replies[0].Draft != d || f.out.replies[0].Ping != "✅ Done — took 43s." {
		t.Fatalf("replies %+v", f.out.replies)
	}
	if len(d.finals) != 0 {
		t.Errorf("the card was collapsed under its answer: %q", d.finals)
	}
}

// TestFastTurnHasNoCard: a turn answered within cardDelay shows no card
// and pings nobody.
func TestFastTurnHasNoCard(t *testing.T) {
	t.Parallel()
	f, _, d := cardFixture(t, Settings{Streaming: StreamOff, PingAfter: 30 * time.Second})
	f.turns.Run(context.Background(), f.request("tg", "hi"))
	if len(d.cards) != 0 || len(f.out.replies) != 1 || f.out.replies[0].Ping != "" {
		t.Fatalf("cards %q replies %+v", d.cards, f.out.replies)
	}
}

// TestTurnCardCollapses: a card whose turn ends with no reply in it (claude
// said NO_REPLY; /stop) collapses to one line; a stopped turn pings
// nobody.
func TestTurnCardCollapses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		result runner.Result
		abort  string
		want   string
	}{
		{"no reply", runner.Result{Text: "NO_REPLY"}, "", "✓ Done in 35s."},
		{"stopped", runner.Result{Err: &runner.Error{Kind: runner.KindAborted}}, "stopped by /stop", "⏹ Stopped after 35s."},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, clk, d := cardFixture(t, Settings{Streaming: StreamOff, PingAfter: 30 * time.Second})
			var cards []string
			runFor(t, f, clk, d, &cards, 35*time.Second)
			f.agent.result = c.result
			req := f.request("tg", "go")
			req.AbortReason = func() string { return c.abort }
			f.turns.Run(context.Background(), req)
			if len(d.finals) != 1 || d.finals[0] != c.want {
				t.Errorf("finals %q, want %q", d.finals, c.want)
			}
			if len(f.out.replies) != 1 || f.out.replies[0].Text != "" || (c.abort != "" && f.out.replies[0].Ping != "") {
				t.Errorf("replies %+v", f.out.replies)
			}
		})
	}
}

// TestVerboseStepsInTheCard: with /verbose on, a turn with a card lists
// its tool steps in the card, not as a message each.
func TestVerboseStepsInTheCard(t *testing.T) {
	t.Parallel()
	f, clk, d := cardFixture(t, Settings{Streaming: StreamOff, Verbose: true})
	run, emit, finish := runner.StreamedTurn()
	f.agent.turn = run
	want := "⚙ Read: core/queue/lane.go\n⚙ Bash: go test ./core/queue/"
	go func() {
		defer finish(runner.Result{Text: "All done."})
		if !clk.BlockUntil(1, 5*time.Second) {
			t.Error("the card's timer was never armed")
			return
		}
		emit(runner.Event{Kind: runner.EventToolUse, Tool: &runner.ToolUse{Name: "Read", Summary: "core/queue/lane.go"}})
		emit(runner.Event{Kind: runner.EventToolUse, Tool: &runner.ToolUse{Name: "Bash", Summary: "go test ./core/queue/"}})
		clk.Advance(cardDelay)
		// The steps reach the card as the turn's events are read: the
		// card shows them at one of its next ticks.
		if d.showsWithin(clk, want) {
			return
		}
		t.Errorf("no card shows the steps %q: %q", want, d.cards)
	}()
	f.turns.Run(context.Background(), f.request("tg", "refactor the queue"))
	for _, s := range f.out.sent {
		if strings.Contains(s, "⚙") {
			t.Errorf("a step went out as a message of its own: %q", s)
		}
	}
	if len(f.out.replies) != 1 || f.out.replies[0].Text != "All done." || f.out.replies[0].Draft != d {
		t.Errorf("replies %+v", f.out.replies)
	}
}

// cardApprovals hands the test each question's card and answers with
// what the test sends.
type cardApprovals struct {
	cards  chan QuestionCard
	decide chan runner.Decision
}

func (a *cardApprovals) Ask(_ context.Context, _ sessionkey.Key, _ message.Target, _ *message.Message, _ *runner.PermissionRequest, card QuestionCard) (runner.Decision, string) {
	a.cards <- card
	return <-a.decide, ""
}
func (a *cardApprovals) Auto(sessionkey.Key, *runner.PermissionRequest, runner.Rule) {}

// TestApprovalOnTheCard: a tool approval the card carries shows at once
// (not at the card's next tick, nor after cardDelay): the question in
// place of the steps, its buttons above Stop; once answered the card
// works on, the outcome as its step.
func TestApprovalOnTheCard(t *testing.T) {
	t.Parallel()
	ap := &cardApprovals{cards: make(chan QuestionCard, 1), decide: make(chan runner.Decision, 1)}
	f, _, d := cardFixture(t, Settings{Streaming: StreamOff, Approvals: true}, func(o *Options) { o.Approvals = ap })
	run, emit, finish := runner.StreamedTurn()
	f.agent.turn = run
	perm, decided := runner.NewPermissionRequest("rq", "Bash", []byte(`{"command":"go test ./..."}`))
	go func() {
		defer finish(runner.Result{Text: "Tests pass."})
		emit(runner.Event{Kind: runner.EventPermission, Permission: perm})
		var card QuestionCard
		select {
		case card = <-ap.cards:
		case <-time.After(5 * time.Second):
			t.Error("no question was asked")
			return
		}
		if card == nil {
			t.Error("the turn offered no card")
			ap.decide <- runner.Decision{}
			return
		}
		rows := [][]channel.Button{{{ID: "ap:1:y", Label: "Allow"}, {ID: "ap:1:n", Label: "Deny"}}}
		if !card.Ask("claude wants to use Bash:\n$ go test ./...\nAllow it?", channel.FormatPlain, rows) {
			t.Error("the card refused the question")
		}
		if got, want := d.next(t), "⏸ Waiting for approval · 0s\nclaude wants to use Bash:\n$ go test ./...\nAllow it?\n2 messages wait behind this one. | ap:1:y,ap:1:n,/stop"; got != want {
			t.Errorf("card %q, want %q", got, want)
		}
		card.Answered("✅ Allowed by Olga. Bash:\n$ go test ./...")
		if got, want := d.next(t), "⏳ Working · 0s\n✅ Allowed by Olga. Bash\n2 messages wait behind this one. | /stop"; got != want {
			t.Errorf("card %q, want %q", got, want)
		}
		ap.decide <- runner.Decision{Allow: true}
		if dd := <-decided; !dd.Allow {
			t.Errorf("decision %+v", dd)
		}
	}()
	f.turns.Run(context.Background(), f.request("tg", "run the tests"))
	if len(f.out.replies) != 1 || f.out.replies[0].Text != "Tests pass." || f.out.replies[0].Draft != d {
		t.Errorf("replies %+v", f.out.replies)
	}
}

// TestCardText: the card shows the current step, or with /verbose on the
// last cardLines steps; a tool use waiting for approval; elapsed time in
// steps that keep edits rare.
func TestCardText(t *testing.T) {
	t.Parallel()
	f, clk, _ := cardFixture(t, Settings{})
	c := &card{t: f.turns, key: "k", started: clk.Now()}
	for i := range 10 {
		c.step("⚙ Read: f" + string(rune('0'+i)) + ".go")
	}
	clk.Advance(75 * time.Second)
	if got, want := c.render(), "⏳ Working · 1m 10s\n⚙ Read: f9.go\n2 messages wait behind this one."; got != want {
		t.Errorf("card %q, want %q", got, want)
	}
	c.verbose = true
	c.asking("Bash")
	got := c.render()
	if !strings.HasPrefix(got, "⏸ Waiting for approval: Bash · 1m 10s\n⚙ Read: f2.go\n") || strings.Count(got, "⚙") != cardLines || !strings.Contains(got, "⚙ Read: f9.go\n2 messages") {
		t.Errorf("verbose card %q", got)
	}
	for d, want := range map[time.Duration]string{4 * time.Second: "0s", 59 * time.Second: "55s", 9*time.Minute + 59*time.Second: "9m 50s", 42 * time.Minute: "42m", 2*time.Hour + 5*time.Minute: "2h 05m"} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestGroupChatterHasNoCard: in a group, a slow turn nobody addressed to
// the bot (require_mention off: claude reads the chatter) shows no card;
// one that mentions it does.
func TestGroupChatterHasNoCard(t *testing.T) {
	t.Parallel()
	for _, mentioned := range []bool{false, true} {
		f, clk, d := cardFixture(t, Settings{Streaming: StreamOff})
		if mentioned {
			var cards []string
			runFor(t, f, clk, d, &cards, cardDelay)
		} else {
			f.agent.onRun = func() {
				clk.Advance(time.Minute) // the card's timer would have fired
			}
		}
		f.n++
		m := message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatGroup, ChatID: "5", MessageID: "g" + string(rune('0'+f.n)),
			Sender: channel.Sender{ID: "7", Name: "Bob"}, Body: "lunch?", Timestamp: f.now, From: "tg:7", WasMentioned: mentioned}
		f.turns.Run(context.Background(), f.requestOf(m))
		if got := len(d.cards) > 0; got != mentioned {
			t.Errorf("mentioned %v: cards %q", mentioned, d.cards)
		}
	}
}

// TestHookStepsInTheCard: what the message_received hooks did before the turn (their
// Step lines, recorded with the message) is the card's first step.
func TestHookStepsInTheCard(t *testing.T) {
	t.Parallel()
	f, clk, d := cardFixture(t, Settings{Streaming: StreamOff})
	run, _, finish := runner.StreamedTurn()
	f.agent.turn = run
	const want = "🎙 transcribed in 1.4 s"
	go func() {
		defer finish(runner.Result{Text: "Booked."})
		if !clk.BlockUntil(1, 5*time.Second) {
			t.Error("the card's timer was never armed")
			return
		}
		clk.Advance(cardDelay)
		if d.showsWithin(clk, want) {
			return
		}
		t.Errorf("no card shows the hook's step %q: %q", want, d.cards)
	}()
	f.n++
	m := message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatDirect, ChatID: "5", MessageID: "m-hook",
		Sender: channel.Sender{ID: "5", Name: "Ann"}, Body: "[Voice note transcript]\nbook a table", Timestamp: f.now, From: "tg:5",
		Received: &message.Received{Hooks: []string{"voice"}, Steps: []string{want}}}
	f.turns.Run(context.Background(), f.requestOf(m))
	if len(f.out.replies) != 1 || f.out.replies[0].Text != "Booked." {
		t.Errorf("replies %+v", f.out.replies)
	}
}

// TestCardState: while a turn runs its card's text is the session's card
// state, on one line; when it ends there is none.
func TestCardState(t *testing.T) {
	t.Parallel()
	f, clk, d := cardFixture(t, Settings{Streaming: StreamOff})
	var during []string
	f.agent.onRun = func() {
		if !clk.BlockUntil(1, 5*time.Second) {
			t.Error("the card's timer was never armed")
			return
		}
		clk.Advance(cardDelay)
		d.next(t)
		f.turns.cards.Range(func(k, _ any) bool {
			during = append(during, f.turns.CardState(k.(string)))
			return true
		})
	}
	f.agent.result = runner.Result{Text: "Done."}
	req := f.request("tg", "work")
	f.turns.Run(context.Background(), req)
	if want := "⏳ Working · 0s · thinking… · 2 messages wait behind this one."; len(during) != 1 || during[0] != want {
		t.Errorf("card states while it ran %q, want [%q]", during, want)
	}
	n := 0
	f.turns.cards.Range(func(k, _ any) bool { n++; return true })
	if n != 0 || f.turns.CardState(req.Key.String()) != "" {
		t.Errorf("%d cards after the turn", n)
	}
}
