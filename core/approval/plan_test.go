package approval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

func planRequest(plan string) *runner.PermissionRequest {
	return request(runner.ExitPlanMode, map[string]any{"plan": plan, "planFilePath": "/h/.claude/plans/x.md"})
}

// buttonIDs are the ids of rows' buttons after the question id.
func buttonIDs(rows [][]channel.Button) []string {
	var out []string
	for _, r := range rows {
		for _, b := range r {
			_, verb, _ := strings.Cut(strings.TrimPrefix(b.ID, buttonPrefix), ":")
			out = append(out, verb+"="+b.Label)
		}
	}
	return out
}

// TestPlanQuestion: a plan is shown whole, as markdown, with Approve and
// Keep planning — no Always — and Approve allows; Keep planning denies
// with a message telling claude to wait for feedback and names who sent
// it back; a pressed Always (forged) and a typed "always" are refused.
func TestPlanQuestion(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		o := newOut(true, true)
		a := New(o, Config{}, nil, nil)
		q := Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: planRequest("# Plan\n1. **add** the route\n2. test it")}
		res := ask(t, a, o, q)
		got := o.last()
		if !strings.Contains(got.text, "# Plan\n1. **add** the route\n2. test it") || got.format != channel.FormatMarkdown {
			t.Fatalf("the plan is not on the question (format %q): %q", got.format, got.text)
		}
		if ids := strings.Join(buttonIDs(got.buttons), " "); ids != "y=Approve k=Keep planning" {
			t.Fatalf("buttons %s", ids)
		}
		id := strings.TrimPrefix(strings.Split(got.buttons[0][0].ID, ":")[1], "")
		for _, forged := range []string{"a", "n"} {
			if handled, reply := a.Answer(press("ann", buttonPrefix+id+":"+forged), false); !handled || !strings.Contains(reply, "not one of the buttons") {
				t.Fatalf("forged %s: %v %q", forged, handled, reply)
			}
		}
		if handled, reply := a.Answer(from("ann", "always"), false); !handled || reply != noAlwaysForPlans {
			t.Fatalf("typed always: %v %q", handled, reply)
		}
		verb := "y"
		if keep {
			verb = keepVerb
		}
		if handled, reply := a.Answer(press("ann", buttonPrefix+id+":"+verb), false); !handled || reply != "" {
			t.Fatalf("press: %v %q", handled, reply)
		}
		out := wait(t, res)
		switch {
		case !keep && (!out.Decision.Allow || out.KeepPlanning || len(out.Decision.Always) > 0):
			t.Fatalf("approve: %+v", out)
		case keep && (out.Decision.Allow || !out.KeepPlanning || out.ByID != "tg:ann" || !strings.Contains(out.Decision.Message, "next message")):
			t.Fatalf("keep planning: %+v", out)
		}
		if e := o.edited[got.id]; keep && !strings.Contains(e, "Ann sent the plan back") || !keep && !strings.Contains(e, "Plan approved by Ann") {
			t.Fatalf("result line %q", e)
		}
	}
}

// TestPlanFeedbackWritten: words of one's own written while a plan waits
// send it back and stay a message (they run as the feedback): the
// answer is not handled, the outcome is Keep planning by the writer.
func TestPlanFeedbackWritten(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: planRequest("1. x")})
	if h, _ := a.Answer(from("bob", "looks wrong"), false); h {
		t.Fatal("another member's words were taken")
	}
	if h, reply := a.Answer(from("ann", "use OAuth instead"), false); h || reply != "" {
		t.Fatalf("the feedback was swallowed: %v %q", h, reply)
	}
	if out := wait(t, res); !out.KeepPlanning || out.ByID != "tg:ann" {
		t.Fatalf("%+v", out)
	}
}

// TestPlanTyped: without buttons the plan asks for a typed approve or
// keep planning, which decide it.
func TestPlanTyped(t *testing.T) {
	t.Parallel()
	o := newOut(false, true)
	a := New(o, Config{}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: planRequest("do it")})
	if got := o.last(); !strings.Contains(got.text, "Reply approve") || strings.Contains(got.text, "always") || got.buttons != nil {
		t.Fatalf("typed question: %q", got.text)
	}
	if handled, _ := a.Answer(from("ann", "keep planning"), false); !handled {
		t.Fatal("keep planning not taken")
	}
	if out := wait(t, res); !out.KeepPlanning || out.Decision.Allow {
		t.Fatalf("%+v", out)
	}
}

// TestLongPlanGoesAsAFile: a plan longer than one message of the channel
// goes as plan.md with the question under it; the question does not
// carry the plan. Where no file can be sent, the whole plan is in the text.
func TestLongPlanGoesAsAFile(t *testing.T) {
	t.Parallel()
	plan := "# Plan\n" + strings.Repeat("- a step of the plan\n", 300)
	for _, files := range []bool{true, false} {
		o := newOut(true, true)
		o.files, o.limit = files, 4096
		a := New(o, Config{}, nil, nil)
		res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: planRequest(plan)})
		o.mu.Lock()
		sends := append([]sent(nil), o.sent...)
		o.mu.Unlock()
		q := sends[len(sends)-1]
		if files {
			if len(sends) != 2 || sends[0].file != planFile || string(sends[0].data) != strings.TrimSpace(plan)+"\n" {
				t.Fatalf("no plan.md: %+v", sends[0])
			}
			if strings.Contains(q.text, "a step of the plan") || !strings.Contains(q.text, "attached file plan.md") || len(q.buttons) != 1 {
				t.Fatalf("question %q", q.text)
			}
		} else if !strings.Contains(q.text, strings.TrimSpace(plan)) {
			t.Fatal("without files the whole plan must be in the text")
		}
		a.Answer(press("ann", q.buttons[0][0].ID), false)
		wait(t, res)
	}
}

// TestPlanTimeoutKeepsPlanning: an unanswered plan is not approved, and
// claude is told to stay in plan mode (the injected timer fires).
func TestPlanTimeoutKeepsPlanning(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{Timeout: time.Minute}, nil, nil)
	fire := make(chan time.Time)
	a.after = func(time.Duration) <-chan time.Time { return fire }
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: planRequest("p")})
	fire <- time.Time{}
	out := wait(t, res)
	if out.Decision.Allow || out.KeepPlanning || out.By != "timeout" || !strings.Contains(out.Decision.Message, "stay in plan mode") {
		t.Fatalf("%+v", out)
	}
}

// TestPlanOnTheCard: an owner's own plan goes on the turn's card, as
// markdown, with Approve and Keep planning.
func TestPlanOnTheCard(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{OwnersOnly: true, Owners: []string{"tg:42"}, DirectChats: map[string]bool{"tg": true}}, nil, nil)
	card := newCard()
	res := make(chan Outcome, 1)
	go func() {
		res <- a.Ask(context.Background(), Question{Key: sk("s"), Target: chat, Asker: "tg:42", AskerOwner: true, Card: card, Request: planRequest("## Steps\n1. one")})
	}()
	select {
	case <-card.asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the plan never reached the card")
	}
	card.mu.Lock()
	text, format, ids := card.text, card.format, buttonIDs(card.buttons)
	card.mu.Unlock()
	if !strings.Contains(text, "## Steps\n1. one") || format != channel.FormatMarkdown || strings.Join(ids, " ") != "y=Approve k=Keep planning" {
		t.Fatalf("card %q %q %v", text, format, ids)
	}
	a.Decide(a.Open()[0].ID, true, "Olga", "tg:42")
	if out := wait(t, res); !out.Decision.Allow {
		t.Fatalf("%+v", out)
	}
}

// TestPlanOfAnotherPersonsTurn: a plan of a member's turn goes to the
// owner's own chat (approvers = "owners") and says the feedback is
// written in the turn's chat, where the turn's session is.
func TestPlanOfAnotherPersonsTurn(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{OwnersOnly: true, Owners: []string{"tg:900"}, DirectChats: map[string]bool{"tg": true}}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: planRequest("1. x")})
	sent := o.to("900")
	if len(sent) != 1 || !strings.Contains(sent[0].text, "your next message in tg:42 (the turn's chat) is the feedback") || !strings.Contains(sent[0].text, "Asked in a turn of Ann (tg:ann) in tg:42") {
		t.Fatalf("sent to the owner: %+v", sent)
	}
	if h, reply := a.Answer(press("ann", sent[0].buttons[0][1].ID), false); !h || reply == "" {
		t.Fatalf("the asker answered an owners-only plan: %v %q", h, reply)
	}
	owner := press("900", sent[0].buttons[0][1].ID)
	owner.ChatID, owner.From = "900", "tg:900"
	if h, reply := a.Answer(owner, true); !h || reply != "" {
		t.Fatalf("owner's press: %v %q", h, reply)
	}
	if out := wait(t, res); !out.KeepPlanning || out.ByID != "tg:900" {
		t.Fatalf("%+v", out)
	}
}
