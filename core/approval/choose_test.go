package approval

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestChoicesTyped: where the channel has no buttons, a multi-select is
// answered with typed numbers ("1, 3"), which go back as the labels.
func TestChoicesTyped(t *testing.T) {
	t.Parallel()
	o := newOut(false, true)
	a := New(o, Config{}, nil, nil)
	input := map[string]any{"questions": []any{map[string]any{"question": "Which sizes?", "multiSelect": true,
		"options": []any{map[string]any{"label": "S"}, map[string]any{"label": "M"}, map[string]any{"label": "L"}}}}}
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", Request: request("AskUserQuestion", input)})
	if s := o.last(); !strings.Contains(s.text, "Reply with one or more numbers (1, 3)") || s.buttons != nil {
		t.Fatalf("question %q %v", s.text, s.buttons)
	}
	if h, _ := a.Answer(from("bob", "2"), false); h {
		t.Fatal("another member's reply was taken as the answer")
	}
	a.Answer(from("ann", "1, 3"), false)
	var in struct{ Answers map[string]any }
	_ = json.Unmarshal(wait(t, res).Decision.UpdatedInput, &in)
	if in.Answers["Which sizes?"] != "S, L" {
		t.Fatalf("answers %v", in.Answers)
	}
}

// TestChoicesTimeout: a question nobody answers is left unanswered, with
// the ones after it: claude gets the answers so far, the rest annotated
// unanswered = "skipped", and the tool is allowed (the turn goes on).
func TestChoicesTimeout(t *testing.T) {
	t.Parallel()
	o := newOut(true, true)
	a := New(o, Config{Timeout: time.Minute}, nil, nil)
	fire := make(chan time.Time)
	a.after = func(time.Duration) <-chan time.Time { return fire }
	input := map[string]any{"questions": []any{
		map[string]any{"question": "Which color?", "options": []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}},
		map[string]any{"question": "Which size?", "options": []any{map[string]any{"label": "S"}, map[string]any{"label": "L"}}},
		map[string]any{"question": "Which day?", "options": []any{map[string]any{"label": "Mon"}, map[string]any{"label": "Tue"}}},
	}}
	res := ask(t, a, o, Question{Key: sk("s"), Target: chat, Asker: "tg:ann", AskerName: "Ann", Request: request("AskUserQuestion", input)})
	a.Answer(press("ann", o.last().buttons[0][0].ID), false)
	<-o.notify
	fire <- time.Time{}
	got := wait(t, res)
	var in struct {
		Answers     map[string]any
		Annotations map[string]map[string]string
	}
	_ = json.Unmarshal(got.Decision.UpdatedInput, &in)
	if !got.Decision.Allow || len(in.Answers) != 1 || in.Answers["Which color?"] != "Red" ||
		in.Annotations["Which size?"]["unanswered"] != "skipped" || in.Annotations["Which day?"]["unanswered"] != "skipped" {
		t.Fatalf("outcome %+v input %s", got, got.Decision.UpdatedInput)
	}
	if e := o.edited["m2"]; !strings.Contains(e, "No answer within 1 minute") {
		t.Errorf("edited %q", e)
	}
	if len(o.to(chat.ChatID)) != 2 {
		t.Error("a question after the unanswered one was asked")
	}
}
