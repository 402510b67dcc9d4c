package approval

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// fakeCard records what a turn's card was asked to carry.
type fakeCard struct {
	mu       sync.Mutex
	refuse   bool
	text     string
	buttons  [][]channel.Button
	format   channel.Format
	answered []string
	asked    chan struct{}
}

func newCard() *fakeCard { return &fakeCard{asked: make(chan struct{}, 4)} }

func (c *fakeCard) Ask(text string, f channel.Format, buttons [][]channel.Button) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse {
		return false
	}
	c.text, c.buttons, c.format = text, buttons, f
	c.asked <- struct{}{}
	return true
}

func (c *fakeCard) Answered(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answered = append(c.answered, line)
}

// TestQuestionOnTheCard: a question asked only in the turn's own chat (an
// owner's own turn) goes on the turn's card — no message of its own — and
// a press of the card's button decides it as one on the question would:
// someone who may not answer is refused, the owner's press allows; the
// card is told how it ended.
func TestQuestionOnTheCard(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{OwnersOnly: true, Owners: []string{"tg:42"}, DirectChats: map[string]bool{"tg": true}}, nil, nil)
	card := newCard()
	q := Question{Key: sk("s"), Target: chat, Asker: "tg:42", AskerName: "Olga", AskerOwner: true, Card: card,
		Request: request("Bash", map[string]any{"command": "rm -rf build"})}
	res := make(chan Outcome, 1)
	go func() { res <- a.Ask(context.Background(), q) }()
	select {
	case <-card.asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the question never reached the card")
	}
	card.mu.Lock()
	text, rows := card.text, card.buttons
	card.mu.Unlock()
	if !strings.Contains(text, "claude wants to use Bash:\n$ rm -rf build") || len(rows) != 2 || rows[0][0].Label != "Allow" || rows[0][1].Label != "Deny" || !strings.HasPrefix(rows[1][0].Label, "Always allow") {
		t.Fatalf("card %q %+v", text, rows)
	}
	m := press("bob", rows[0][0].ID)
	if handled, reply := a.Answer(m, false); !handled || reply != "Only an owner can answer this question." {
		t.Errorf("a stranger's press: %v %q", handled, reply)
	}
	owner := press("42", rows[0][0].ID)
	owner.Sender.Name = "Olga"
	if handled, reply := a.Answer(owner, true); !handled || reply != "" {
		t.Errorf("the owner's press: %v %q", handled, reply)
	}
	if got := wait(t, res); !got.Decision.Allow || got.By != "Olga" {
		t.Errorf("outcome %+v", got)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.sent) != 0 {
		t.Errorf("sent %+v; the card carried the question", o.sent)
	}
	card.mu.Lock()
	defer card.mu.Unlock()
	if len(card.answered) != 1 || !strings.HasPrefix(card.answered[0], "✅ Allowed by Olga.") {
		t.Errorf("the card was told %q", card.answered)
	}
}

// TestQuestionNotOnTheCard: the question is a message of its own where
// the card cannot carry it (it refuses: the answer streams), where the
// channel has no buttons, and where it is asked elsewhere (an owner's own
// chat about another person's turn in a group): the card is not used.
func TestQuestionNotOnTheCard(t *testing.T) {
	t.Parallel()
	group := message.Target{Instance: "tg", ChatID: "-100"}
	for _, c := range []struct {
		name    string
		buttons bool
		refuse  bool
		target  message.Target
		asker   string
		owner   bool
	}{
		{"the card refuses", true, true, chat, "tg:42", true},
		{"no buttons", false, false, chat, "tg:42", true},
		{"asked in the owner's chat", true, false, group, "tg:ann", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := newOut(c.buttons, true)
			a := New(o, Config{OwnersOnly: true, Owners: []string{"tg:42"}, DirectChats: map[string]bool{"tg": true}, Timeout: time.Minute}, nil, nil)
			card := newCard()
			card.refuse = c.refuse
			q := Question{Key: sk("s"), Target: c.target, Asker: c.asker, AskerOwner: c.owner, Card: card, Request: request("Bash", map[string]any{"command": "ls /"})}
			res := ask(t, a, o, q)
			s := o.to("42")
			if len(s) != 1 || !strings.Contains(s[0].text, "claude wants to use Bash:") {
				t.Fatalf("sent to the owner's chat %+v", s)
			}
			if len(card.asked) != 0 {
				t.Error("the card got the question too")
			}
			a.Decide(a.Open()[0].ID, false, "Olga", "admin")
			wait(t, res)
			card.mu.Lock()
			defer card.mu.Unlock()
			if len(card.answered) != 0 {
				t.Errorf("the card was told %q", card.answered)
			}
		})
	}
}
