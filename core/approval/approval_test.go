package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// out records what the approvals send and edit.
type out struct {
	buttons, edits bool
	// files: the channel takes files (SendFile succeeds).
	files bool
	// limit is the channel's message length (Fits); 0: any.
	limit  int
	mu     sync.Mutex
	sent   []sent
	edited map[string]string
	// rows are the buttons an edit left under a message.
	rows   map[string][][]channel.Button
	notify chan struct{}
}

type sent struct {
	tgt     message.Target
	id      string
	text    string
	buttons [][]channel.Button
	format  channel.Format
	// file is an attached file's name and data (text is its caption).
	file string
	data []byte
}

func newOut(buttons, edits bool) *out {
	return &out{buttons: buttons, edits: edits, edited: map[string]string{}, notify: make(chan struct{}, 64)}
}

func (o *out) HasButtons(string) bool { return o.buttons }
func (o *out) SendButtons(_ sessionkey.Key, tgt message.Target, text string, f channel.Format, b [][]channel.Button) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.buttons {
		b = nil
	}
	id := fmt.Sprintf("m%d", len(o.sent)+1)
	o.sent = append(o.sent, sent{tgt: tgt, id: id, text: text, buttons: b, format: f})
	o.notify <- struct{}{}
	return []string{id}
}
func (o *out) SendFile(_ sessionkey.Key, tgt message.Target, name string, data []byte, caption string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.files {
		return false
	}
	o.sent = append(o.sent, sent{tgt: tgt, id: fmt.Sprintf("m%d", len(o.sent)+1), text: caption, file: name, data: data})
	return true
}
func (o *out) EditText(_ message.Target, id, text string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.edits {
		o.edited[id] = text
	}
	return o.edits
}
func (o *out) EditButtons(_ message.Target, id, text string, b [][]channel.Button) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.edits {
		o.edited[id] = text
		if o.rows == nil {
			o.rows = map[string][][]channel.Button{}
		}
		o.rows[id] = b
		o.notify <- struct{}{}
	}
	return o.edits
}
func (o *out) Fits(_, text string, _ channel.Format) bool {
	return o.limit == 0 || len(text) <= o.limit
}
func (o *out) last() sent {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sent[len(o.sent)-1]
}

// to is what was sent to chat id.
func (o *out) to(id string) []sent {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []sent
	for _, s := range o.sent {
		if s.tgt.ChatID == id {
			out = append(out, s)
		}
	}
	return out
}

var chat = message.Target{Instance: "tg", ChatID: "42"}

func request(tool string, input map[string]any) *runner.PermissionRequest {
	b, _ := json.Marshal(input)
	return &runner.PermissionRequest{ID: "rq", Tool: tool, Input: b, Withdrawn: make(chan struct{})}
}

func from(sender string, text string) *message.Message {
	return &message.Message{Instance: "tg", ChatID: "42", From: "tg:" + sender, Sender: channel.Sender{ID: sender, Name: strings.ToUpper(sender[:1]) + sender[1:]}, Body: text}
}

func press(sender, id string) *message.Message {
	m := from(sender, "Allow")
	m.Action = &channel.Action{ButtonID: id, MessageID: "m1"}
	return m
}

// ask runs Ask in the background and waits until the question was sent.
func ask(t *testing.T, a *Approvals, o *out, q Question) <-chan Outcome {
	t.Helper()
	res := make(chan Outcome, 1)
	go func() { res <- a.Ask(context.Background(), q) }()
	select {
	case <-o.notify:
	case <-time.After(5 * time.Second):
		t.Fatal("question not sent")
	}
	return res
}

func wait(t *testing.T, res <-chan Outcome) Outcome {
	t.Helper()
	select {
	case o := <-res:
		return o
	case <-time.After(5 * time.Second):
		t.Fatal("no outcome")
	}
	return Outcome{}
}

// TestButtonsAnswer: with buttons, the question names the tool and its
// command and offers Allow / Deny / Always (naming the rule it allows);
// with approvers = "sender" a press by someone else is refused and changes
// nothing, the asker's press decides; the question is edited to say who
// decided, and the decision is recorded.
func TestButtonsAnswer(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{}, nil, nil)
	q := Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("Bash", map[string]any{"command": "rm -rf build", "description": "clean"})}
	res := ask(t, a, o, q)
	s := o.last()
	if !strings.Contains(s.text, "claude wants to use Bash:\n$ rm -rf build\n(clean)") || !strings.Contains(s.text, "No answer in 5 minutes denies it.") {
		t.Errorf("question %q", s.text)
	}
	if len(s.buttons) != 2 || s.buttons[0][0].Label != "Allow" || s.buttons[0][1].Label != "Deny" || s.buttons[1][0].Label != "Always allow `rm …`" {
		t.Fatalf("buttons %+v", s.buttons)
	}
	for _, row := range s.buttons {
		for _, b := range row {
			if len(b.ID) > channel.MaxButtonID {
				t.Errorf("button id %q over %d bytes", b.ID, channel.MaxButtonID)
			}
		}
	}
	if handled, reply := a.Answer(press("bob", s.buttons[0][0].ID), false); !handled || reply != "Only Ann or an owner can answer this question." {
		t.Errorf("stranger's press: %v %q", handled, reply)
	}
	if v := a.Open(); len(v) != 1 || v[0].Tool != "Bash" || v[0].Asker != "Ann" {
		t.Errorf("open %+v", v)
	}
	if handled, reply := a.Answer(press("ann", s.buttons[1][0].ID), false); !handled || reply != "" {
		t.Errorf("asker's press: %v %q", handled, reply)
	}
	got := wait(t, res)
	if !got.Decision.Allow || len(got.Decision.Always) != 1 || got.Decision.Always[0].String() != "Bash(rm:*)" || got.By != "Ann" {
		t.Errorf("outcome %+v", got)
	}
	if e := o.edited["m1"]; !strings.HasPrefix(e, "✅ Allowed by Ann, and `rm …` from now on in this session.") {
		t.Errorf("edited %q", e)
	}
	if r := a.Recent(sk("s"), 5); len(r) != 1 || !r[0].Always || r[0].By != "Ann" || r[0].Tool != "Bash" {
		t.Errorf("recent %+v", r)
	}
	if handled, reply := a.Answer(press("ann", s.buttons[0][0].ID), false); !handled || reply != "This question is no longer open." {
		t.Errorf("late press: %v %q", handled, reply)
	}
	if len(a.Open()) != 0 {
		t.Error("question still open")
	}
}

// TestTypedAnswer: without buttons the question says how to reply; a
// "no" from someone who may not answer is an ordinary message; an owner's
// "No." denies, and the denial tells claude who decided.
func TestTypedAnswer(t *testing.T) {
	t.Parallel()
	o := newOut(false, false)
	a := New(o, Config{Timeout: time.Minute}, nil, nil)
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("WebFetch", map[string]any{"url": "https://example.org/x"})})
	if s := o.last(); s.buttons != nil || !strings.Contains(s.text, "https://example.org/x") || !strings.Contains(s.text, "Reply yes, no, or always (allows fetches from example.org for the rest of this session). No answer in 1 minute denies it.") {
		t.Errorf("question %+v", s)
	}
	if handled, _ := a.Answer(from("bob", "no"), false); handled {
		t.Error("a stranger's no was taken as an answer")
	}
	if handled, _ := a.Answer(from("ann", "tell me more"), false); handled {
		t.Error("an ordinary message was taken as an answer")
	}
	if handled, _ := a.Answer(from("olga", "No."), true); !handled {
		t.Error("the owner's no was not taken")
	}
	got := wait(t, res)
	if got.Decision.Allow || got.By != "Olga" || !strings.Contains(got.Decision.Message, "denied") {
		t.Errorf("outcome %+v", got)
	}
	if len(o.sent) != 1 {
		t.Errorf("%d messages; an answered question needs no echo where it cannot be edited", len(o.sent))
	}
}

// TestTimeoutDenies: no answer within the timeout denies; where the
// question cannot be edited the chat is told. The owners' direct chats
// cannot be addressed on this channel, so the question is asked in the
// turn's chat, and the asker (no owner) cannot answer it.
func TestTimeoutDenies(t *testing.T) {
	t.Parallel()
	o := newOut(false, false)
	a := New(o, Config{Timeout: 2 * time.Minute, OwnersOnly: true, Owners: []string{"tg:olga"}}, nil, nil)
	fire := make(chan time.Time)
	var asked time.Duration
	a.after = func(d time.Duration) <-chan time.Time { asked = d; return fire }
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: request("Write", map[string]any{"file_path": "/w/notes.md", "content": "a\nb\n"})})
	if s := o.last(); !strings.Contains(s.text, "/w/notes.md\nwrite 2 lines, 4 bytes:\n│ a\n│ b\n") || s.tgt != chat {
		t.Errorf("question %q", s.text)
	}
	if handled, _ := a.Answer(from("ann", "yes"), false); handled {
		t.Error("with approvers = owners the asker's yes must not answer")
	}
	fire <- time.Time{}
	got := wait(t, res)
	if asked != 2*time.Minute || got.Decision.Allow || got.By != "timeout" || !strings.Contains(got.Decision.Message, "Nobody answered within 2 minutes") {
		t.Errorf("outcome %+v (timer %v)", got, asked)
	}
	if s := o.last(); !strings.HasPrefix(s.text, "⏱ No answer within 2 minutes — denied.") {
		t.Errorf("timeout notice %q", s.text)
	}
}

// TestWithdrawn: a question claude withdraws ends without a decision and
// the message says so.
func TestWithdrawn(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{}, nil, nil)
	req := request("Bash", map[string]any{"command": "ls"})
	w := make(chan struct{})
	req.Withdrawn = w
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: req})
	close(w)
	if got := wait(t, res); got.By != "withdrawn" || got.Decision.Allow {
		t.Errorf("outcome %+v", got)
	}
	if !strings.HasPrefix(o.edited["m1"], "(Question withdrawn") {
		t.Errorf("edited %q", o.edited["m1"])
	}
	if len(a.Recent(sessionkey.Key{}, 5)) != 0 {
		t.Error("a withdrawn question is not a decision")
	}
}

// TestChoices: claude's AskUserQuestion: each question is sent with its
// options numbered (buttons where the channel has them); a press, a typed
// number or the person's own words answer it; the answers go back as the
// tool's input with "answers".
func TestChoices(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{}, nil, nil)
	input := map[string]any{"questions": []any{
		map[string]any{"question": "Which color?", "header": "Color", "options": []any{map[string]any{"label": "Red", "description": "warm"}, map[string]any{"label": "Blue", "description": "cool"}}},
		map[string]any{"question": "Which sizes?", "header": "Size", "multiSelect": true, "options": []any{map[string]any{"label": "S"}, map[string]any{"label": "M"}, map[string]any{"label": "L"}}},
		map[string]any{"question": "Anything else?", "header": "Else", "options": []any{map[string]any{"label": "No"}, map[string]any{"label": "Yes"}}},
	}}
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("AskUserQuestion", input)})
	s := o.last()
	contains := func(got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
	contains(s.text, "claude asks: Which color?\n1. Red — warm\n2. Blue — cool\nPress one, or reply in your own words.")
	if len(s.buttons) != 2 || s.buttons[1][0].Label != "Blue" {
		t.Fatalf("buttons %+v", s.buttons)
	}
	if h, reply := a.Answer(press("bob", s.buttons[1][0].ID), false); !h || !strings.HasPrefix(reply, "Only Ann") {
		t.Errorf("stranger: %v %q", h, reply)
	}
	a.Answer(press("ann", s.buttons[1][0].ID), false)
	<-o.notify
	s = o.last()
	contains(s.text, "claude asks: Which sizes?", "Press the ones you pick, then Done")
	if len(s.buttons) != 4 || s.buttons[0][0].Label != "☐ S" || s.buttons[3][0].Label != "Done" {
		t.Fatalf("a several-choice question's buttons %+v", s.buttons)
	}
	if h, reply := a.Answer(press("ann", s.buttons[3][0].ID), false); !h || !strings.Contains(reply, "Pick at least one") {
		t.Errorf("done with nothing picked: %q", reply)
	}
	for _, i := range []int{1, 1, 0, 2} { // M on and off again, S, L
		if h, reply := a.Answer(press("ann", s.buttons[i][0].ID), false); !h || reply != "" {
			t.Fatalf("toggle %d: %q", i, reply)
		}
		<-o.notify
	}
	o.mu.Lock()
	rows := o.rows[s.id]
	o.mu.Unlock()
	if len(rows) != 4 || rows[0][0].Label != "☑ S" || rows[1][0].Label != "☐ M" || rows[2][0].Label != "☑ L" {
		t.Fatalf("toggles shown %+v", rows)
	}
	if h, reply := a.Answer(press("bob", s.buttons[3][0].ID), false); !h || !strings.HasPrefix(reply, "Only Ann") {
		t.Errorf("stranger's Done: %q", reply)
	}
	if h, _ := a.Answer(from("ann", "/status"), false); h {
		t.Fatal("a command was taken as the answer")
	}
	a.Answer(press("ann", s.buttons[3][0].ID), false)
	<-o.notify
	if h, _ := a.Answer(from("ann", "make it quick"), false); !h {
		t.Fatal("own words not taken")
	}
	got := wait(t, res)
	var in struct{ Answers map[string]any }
	_ = json.Unmarshal(got.Decision.UpdatedInput, &in)
	if !got.Decision.Allow || in.Answers["Which color?"] != "Blue" || in.Answers["Which sizes?"] != "S, L" || in.Answers["Anything else?"] != "make it quick" {
		t.Errorf("outcome %+v answers %v", got, in.Answers)
	}
	if e := o.edited["m1"]; e != "❓ Which color?\n→ Blue (Ann)" {
		t.Errorf("edited %q", e)
	}
}

// TestDecisionsAreRecorded: every decision reaches OnDecided (the audit
// trail) with the turn's chat, the tool, who decided and the digest of the
// input — the same digest for the same input, another for another.
func TestDecisionsAreRecorded(t *testing.T) {
	t.Parallel()
	o := newOut(false, false)
	a := New(o, Config{Timeout: time.Minute}, nil, nil)
	var got []Record
	a.OnDecided(func(r Record) { got = append(got, r) })
	req := request("WebFetch", map[string]any{"url": "https://example.org/x"})
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: req})
	if handled, _ := a.Answer(from("olga", "yes"), true); !handled {
		t.Fatal("the owner's yes was not taken")
	}
	wait(t, res)
	if len(got) != 1 {
		t.Fatalf("%d records", len(got))
	}
	r := got[0]
	if r.Tool != "WebFetch" || !r.Allow || r.By != "Olga" || r.ByID != "tg:olga" || r.Chat != chat || r.Digest != Digest(req.Input) || !strings.HasPrefix(r.Digest, "sha256:") || len(r.Digest) != len("sha256:")+16 {
		t.Errorf("record %+v", r)
	}
	if Digest([]byte(`{"url":"https://example.org/y"}`)) == r.Digest {
		t.Error("two inputs, one digest")
	}
}

// pressDuringSend is an Output whose channel delivers a press of the
// question's first button before its send has returned the message id
// (a fast platform, a busy host).
type pressDuringSend struct {
	*out
	a     *Approvals
	who   string
	reply string
}

func (p *pressDuringSend) SendButtons(key sessionkey.Key, tgt message.Target, text string, format channel.Format, b [][]channel.Button) []string {
	if len(b) > 0 && p.reply == "" {
		_, p.reply = p.a.Answer(press(p.who, b[0][0].ID), false)
		if p.reply == "" {
			p.reply = "answered"
		}
	}
	return p.out.SendButtons(key, tgt, text, format, b)
}

// TestPressBeforeTheSendReturns: a press that comes back before the send
// of its question returned is the asker's answer, not "only … can answer"
// (TestApprovalsWithButtons failed so under load).
func TestPressBeforeTheSendReturns(t *testing.T) {
	t.Parallel()
	o := &pressDuringSend{out: newOut(true, true), who: "ann"}
	a := New(o, Config{Timeout: time.Minute}, nil, nil)
	o.a = a
	got := a.Ask(context.Background(), Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("WebFetch", map[string]any{"url": "https://example.org/x"})})
	if o.reply != "answered" || !got.Decision.Allow || got.By != "Ann" {
		t.Errorf("press during the send: reply %q, outcome %+v", o.reply, got)
	}
}

// TestToggleBeforeTheSendReturns: a multi-select's option pressed before
// the send of its question returned is shown picked once the send did
// (TestQuestionTelegramRealClaude's press came 6 ms after the message,
// under load before the host had its id, and the message never showed it).
func TestToggleBeforeTheSendReturns(t *testing.T) {
	t.Parallel()
	o := &pressDuringSend{out: newOut(true, true), who: "ann"}
	a := New(o, Config{Timeout: time.Minute}, nil, nil)
	o.a = a
	input := map[string]any{"questions": []any{
		map[string]any{"question": "Which sizes?", "header": "Size", "multiSelect": true, "options": []any{map[string]any{"label": "S"}, map[string]any{"label": "M"}}},
	}}
	res := ask(t, a, o.out, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("AskUserQuestion", input)})
	if o.reply != "answered" {
		t.Fatalf("the press during the send: %q", o.reply)
	}
	select {
	case <-o.notify:
	case <-time.After(5 * time.Second):
		t.Fatal("the toggle pressed during the send was never shown")
	}
	s := o.last()
	o.mu.Lock()
	rows := o.rows[s.id]
	o.mu.Unlock()
	if len(rows) != 3 || rows[0][0].Label != "☑ S" || rows[1][0].Label != "☐ M" {
		t.Fatalf("shown after the send: %+v", rows)
	}
	a.Answer(press("ann", s.buttons[2][0].ID), false)
	var in struct{ Answers map[string]any }
	got := wait(t, res)
	_ = json.Unmarshal(got.Decision.UpdatedInput, &in)
	if in.Answers["Which sizes?"] != "S" {
		t.Errorf("answers %v", in.Answers)
	}
}

// TestAlwaysNamesTheWholeRule: "Always" for a subcommand behind options
// names the options and the subcommand ("git -C … status …", never
// "git …"), and where the button cuts it, the question's text says it
// whole.
func TestAlwaysNamesTheWholeRule(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{}, nil, nil)
	dir := "/srv/projects/customer-portal/services/billing"
	q := Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("Bash", map[string]any{"command": "git -C " + dir + " status --short"})}
	res := ask(t, a, o, q)
	s := o.last()
	want := "Always allow `git -C " + dir + " status …`"
	if len(s.buttons) != 2 || !strings.HasPrefix(s.buttons[1][0].Label, "Always allow `git -C /srv/") {
		t.Fatalf("buttons %+v", s.buttons)
	}
	if !strings.Contains(s.text, want+" for the rest of this session.") {
		t.Errorf("the question does not name the whole rule %q:\n%s", want, s.text)
	}
	a.Answer(press("ann", s.buttons[1][0].ID), false)
	if out := wait(t, res); len(out.Decision.Always) != 1 || out.Decision.Always[0].String() != "Bash(git -C "+dir+" status:*)" {
		t.Errorf("always %+v", out.Decision.Always)
	}
}

// sk is the key of a test session named chat.
func sk(chat string) sessionkey.Key {
	return sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: chat}
}
