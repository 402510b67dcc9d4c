package approval

import (
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

var group = message.Target{Instance: "tg", ChatID: "-100"}

// inChat is text from sender in chat.
func inChat(chatID, sender, text string) *message.Message {
	m := from(sender, text)
	m.ChatID = chatID
	return m
}

// TestOwnersAnswerForOthers: with approvers = "owners" (the default) a
// non-owner's question goes to each owner's direct chat, with who asked
// and where; the turn's chat is told it waits for an owner. The asker
// answering "yes" in their chat, or pressing the owner's button, approves
// nothing; an owner's press does, and both the question and the waiting
// notice say so.
func TestOwnersAnswerForOthers(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{OwnersOnly: true, Owners: []string{"tg:olga", "tg:*", "dc:9"}, DirectChats: map[string]bool{"tg": true}}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: group, Asker: "tg:ann", AskerName: "Ann", Request: request("Bash", map[string]any{"command": "id > ~/owned"})})
	<-o.notify // the waiting notice
	q := o.to("olga")
	if len(q) != 1 || !strings.Contains(q[0].text, "$ id > ~/owned") || !strings.Contains(q[0].text, "Asked in a turn of Ann (tg:ann) in tg:-100.") {
		t.Fatalf("to the owner: %+v", q)
	}
	if len(q[0].buttons) != 1 {
		t.Errorf("a redirected command offers no always: %+v", q[0].buttons)
	}
	w := o.to("-100")
	if len(w) != 1 || w[0].text != "Waiting for an owner to approve Bash." || w[0].buttons != nil {
		t.Fatalf("to the turn's chat: %+v", w)
	}
	if handled, _ := a.Answer(inChat("-100", "ann", "yes"), false); handled {
		t.Error("the asker's yes in their chat answered")
	}
	if handled, _ := a.Answer(inChat("ann", "ann", "yes"), false); handled {
		t.Error("the asker's yes in their own direct chat answered")
	}
	p := press("ann", q[0].buttons[0][0].ID)
	p.ChatID = "-100"
	if handled, reply := a.Answer(p, false); !handled || reply != "Only an owner can answer this question." {
		t.Errorf("the asker's press: %v %q", handled, reply)
	}
	p = press("olga", q[0].buttons[0][0].ID)
	p.ChatID = "olga"
	if handled, reply := a.Answer(p, true); !handled || reply != "" {
		t.Errorf("the owner's press: %v %q", handled, reply)
	}
	got := wait(t, res)
	if !got.Decision.Allow || got.By != "Olga" {
		t.Errorf("outcome %+v", got)
	}
	if e := o.edited[q[0].id]; !strings.HasPrefix(e, "✅ Allowed by Olga.") {
		t.Errorf("question edited to %q", e)
	}
	if e := o.edited[w[0].id]; !strings.HasPrefix(e, "✅ Allowed by Olga.") {
		t.Errorf("notice edited to %q", e)
	}
}

// TestRoute: where a question is asked, by approvers, asker and the
// owners the channel can reach.
func TestRoute(t *testing.T) {
	t.Parallel()
	direct := map[string]bool{"tg": true}
	tests := []struct {
		name   string
		cfg    Config
		q      Question
		want   []message.Target
		notify bool
	}{
		{"sender", Config{Owners: []string{"tg:olga"}, DirectChats: direct}, Question{Target: group, Asker: "tg:ann"}, []message.Target{group}, false},
		{"an owner's turn", Config{OwnersOnly: true, Owners: []string{"tg:olga"}, DirectChats: direct}, Question{Target: group, Asker: "tg:olga", AskerOwner: true}, []message.Target{group}, false},
		{"another's turn", Config{OwnersOnly: true, Owners: []string{"tg:olga", "tg:pia", "tg:olga"}, DirectChats: direct}, Question{Target: group, Asker: "tg:ann"},
			[]message.Target{{Instance: "tg", ChatID: "olga"}, {Instance: "tg", ChatID: "pia"}}, true},
		{"scheduled in an owner's chat", Config{OwnersOnly: true, Owners: []string{"tg:olga"}, DirectChats: direct}, Question{Target: message.Target{Instance: "tg", ChatID: "olga"}},
			[]message.Target{{Instance: "tg", ChatID: "olga"}}, false},
		{"scheduled in a group", Config{OwnersOnly: true, Owners: []string{"tg:olga"}, DirectChats: direct}, Question{Target: group},
			[]message.Target{{Instance: "tg", ChatID: "olga"}}, true},
		{"owners not addressable", Config{OwnersOnly: true, Owners: []string{"dc:9"}}, Question{Target: message.Target{Instance: "dc", ChatID: "c1"}, Asker: "dc:5"},
			[]message.Target{{Instance: "dc", ChatID: "c1"}}, false},
		{"owners elsewhere, not addressable", Config{OwnersOnly: true, Owners: []string{"dc:9"}}, Question{Target: group, Asker: "tg:ann"}, nil, false},
		{"no owners", Config{OwnersOnly: true, DirectChats: direct}, Question{Target: group, Asker: "tg:ann"}, nil, false},
		{"wildcard owner", Config{OwnersOnly: true, Owners: []string{"tg:*"}, DirectChats: direct}, Question{Target: group, Asker: "tg:ann"}, nil, false},
	}
	for _, tt := range tests {
		got, notify := route(tt.q, tt.cfg)
		if notify != tt.notify || len(got) != len(tt.want) {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, notify, tt.want, tt.notify)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			}
		}
	}
}

// TestNoApprover: approvals asked with approvers = "owners" and no owner:
// denied at once, and the chat is told why.
func TestNoApprover(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{OwnersOnly: true, Timeout: time.Hour}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: group, Asker: "tg:ann", Request: request("Bash", map[string]any{"command": "id"})})
	got := wait(t, res)
	if got.Decision.Allow || got.By != "no approver" || !strings.Contains(got.Decision.Message, "denied") {
		t.Errorf("outcome %+v", got)
	}
	if s := o.last(); s.tgt != group || !strings.HasPrefix(s.text, "Bash was denied — no approver: set access.owners.") {
		t.Errorf("told %+v", s)
	}
	if len(a.Open()) != 0 {
		t.Error("a question is open")
	}
}

// TestOwnerUnreachable: when no owner's chat takes the question (the owner
// never wrote to the bot), the tool use is denied and the chat told.
func TestOwnerUnreachable(t *testing.T) {
	t.Parallel()
	o := &failing{out: newOut(true, true), fail: "olga"}
	a := New(o, Config{OwnersOnly: true, Owners: []string{"tg:olga"}, DirectChats: map[string]bool{"tg": true}}, nil, nil)
	got := a.Ask(t.Context(), Question{Key: sk("s"), Target: group, Asker: "tg:ann", Request: request("Bash", map[string]any{"command": "id"})})
	if got.Decision.Allow || got.By != "undeliverable" {
		t.Errorf("outcome %+v", got)
	}
	if s := o.last(); s.tgt != group || s.text != "Bash was not run: no owner could be reached to approve it." {
		t.Errorf("told %+v", s)
	}
}

// failing is out whose sends to one chat fail.
type failing struct {
	*out
	fail string
}

func (f *failing) SendButtons(key sessionkey.Key, tgt message.Target, text string, format channel.Format, b [][]channel.Button) []string {
	if tgt.ChatID == f.fail {
		return nil
	}
	return f.out.SendButtons(key, tgt, text, format, b)
}

// TestAlwaysNeedsARule: where no exact rule exists (a compound command),
// no Always is offered, and a typed "always" is no answer.
func TestAlwaysNeedsARule(t *testing.T) {
	t.Parallel()
	o := newOut(false, true)
	a := New(o, Config{}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: request("Bash", map[string]any{"command": "ls; curl x | sh"})})
	if s := o.last(); !strings.Contains(s.text, "Reply yes or no.") {
		t.Errorf("question %q", s.text)
	}
	if handled, _ := a.Answer(from("ann", "always"), false); handled {
		t.Error("always was taken without a rule to allow")
	}
	a.Answer(from("ann", "no"), false)
	if got := wait(t, res); got.Decision.Allow {
		t.Errorf("outcome %+v", got)
	}
}

// TestAnsweredFromTheOwnersDM: a question about another person's turn is
// sent to the owner's id (Slack: U…), and the platform delivers it, and
// the owner's press or typed answer, in a direct chat with an id of its
// own (D…). The owner answers from there; the asker in their own direct
// chat, the owner in a group, and a thread do not.
func TestAnsweredFromTheOwnersDM(t *testing.T) {
	t.Parallel()
	in := func(chatID, sender, text string, ct channel.ChatType, button bool) func(id string) *message.Message {
		return func(id string) *message.Message {
			m := &message.Message{Instance: "sl", ChatType: ct, ChatID: chatID, From: "sl:" + sender,
				Sender: channel.Sender{ID: sender, Name: sender}, Body: text}
			if button {
				m.Action = &channel.Action{ButtonID: id, MessageID: "m1"}
			}
			return m
		}
	}
	tests := []struct {
		name    string
		msg     func(buttonID string) *message.Message
		owner   bool
		handled bool
		reply   string
		allowed bool
	}{
		{"owner's press in her DM", in("D0OLGA", "U0OLGA", "Allow", channel.ChatDirect, true), true, true, "", true},
		{"owner's yes in her DM", in("D0OLGA", "U0OLGA", "yes", channel.ChatDirect, false), true, true, "", true},
		{"owner's press in the chat asked in", in("U0OLGA", "U0OLGA", "Allow", channel.ChatDirect, true), true, true, "", true},
		{"owner's press in a group", in("C0GEN", "U0OLGA", "Allow", channel.ChatGroup, true), true, true, "Only an owner can answer this question.", false},
		{"owner's yes in a group", in("C0GEN", "U0OLGA", "yes", channel.ChatGroup, false), true, false, "", false},
		{"asker's press in his DM", in("D0ANN", "U0ANN", "Allow", channel.ChatDirect, true), false, true, "Only an owner can answer this question.", false},
		{"asker's yes in his DM", in("D0ANN", "U0ANN", "yes", channel.ChatDirect, false), false, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := newOut(true, true)
			a := New(o, Config{OwnersOnly: true, Owners: []string{"sl:U0OLGA"}, DirectChats: map[string]bool{"sl": true}}, nil, nil)
			res := ask(t, a, o, Question{Key: sk("s"), Target: message.Target{Instance: "sl", ChatID: "C0GEN"}, Asker: "sl:U0ANN", AskerName: "Ann",
				Request: request("Bash", map[string]any{"command": "id"})})
			q := o.to("U0OLGA")
			if len(q) != 1 || len(q[0].buttons) == 0 {
				t.Fatalf("to the owner: %+v", q)
			}
			handled, reply := a.Answer(tt.msg(q[0].buttons[0][0].ID), tt.owner)
			if handled != tt.handled || reply != tt.reply {
				t.Errorf("answer: %v %q, want %v %q", handled, reply, tt.handled, tt.reply)
			}
			if !tt.allowed {
				if open := a.Open(); len(open) != 1 || !a.Decide(open[0].ID, false, "test", "test") {
					t.Fatalf("the question is not open after a refused answer: %+v", open)
				}
			}
			if got := wait(t, res); got.Decision.Allow != tt.allowed {
				t.Errorf("outcome %+v, want allowed %v", got, tt.allowed)
			}
		})
	}
}
