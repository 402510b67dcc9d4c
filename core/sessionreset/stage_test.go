package sessionreset

import "testing"

func TestModelHint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text    string
		offered []string
		model   string
		rest    string
		ok      bool
	}{
		{"sonnet summarize this", nil, "sonnet", "summarize this", true},
		{"Opus", nil, "opus", "", true},
		{"claude-haiku-4-5 hi", nil, "claude-haiku-4-5", "hi", true},
		{"hello there", nil, "", "hello there", false},
		{"minimax summarize", []string{"minimax", "opus"}, "minimax", "summarize", true},
		{"sonnet hi", []string{"opus"}, "", "sonnet hi", false},
		{"", nil, "", "", false},
	} {
		model, rest, ok := ModelHint(c.text, c.offered)
		if model != c.model || rest != c.rest || ok != c.ok {
			t.Errorf("%q %v: %q %q %v", c.text, c.offered, model, rest, ok)
		}
	}
}

// TestDecide: the reset stage's verdict for each kind of trigger.
func TestDecide(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		m       TriggerMatch
		control bool
		offered []string
		want    Verdict
	}{
		{"no trigger", TriggerMatch{}, true, nil, Verdict{}},
		{"no trigger, no control", TriggerMatch{}, false, nil, Verdict{}},
		{"refused", TriggerMatch{Triggered: true, Trigger: "/new"}, false, nil, Verdict{Action: Refuse, Answer: "In this group only an owner can start a new session."}},
		{"bare", TriggerMatch{Triggered: true, Trigger: "/new"}, true, nil, Verdict{Action: Reset, Trigger: "/new", Answer: "New session started."}},
		{"blank payload", TriggerMatch{Triggered: true, Trigger: "/reset", Payload: "  "}, true, nil, Verdict{Action: Reset, Trigger: "/reset", Answer: "New session started."}},
		{"payload runs", TriggerMatch{Triggered: true, Trigger: "/new", Payload: "hi there"}, true, nil, Verdict{Action: Reset, Trigger: "/new"}},
		{"model alone", TriggerMatch{Triggered: true, Trigger: "/new", Payload: "sonnet"}, true, nil, Verdict{Action: Reset, Trigger: "/new", Model: "sonnet", Answer: "New session started with sonnet."}},
		{"model and text", TriggerMatch{Triggered: true, Trigger: "/new", Payload: "opus explain"}, true, nil, Verdict{Action: Reset, Trigger: "/new", Model: "opus"}},
		{"model not offered", TriggerMatch{Triggered: true, Trigger: "/new", Payload: "sonnet hi"}, true, []string{"opus"}, Verdict{Action: Reset, Trigger: "/new"}},
		{"agent's own model", TriggerMatch{Triggered: true, Trigger: "/new", Payload: "minimax"}, true, []string{"minimax"}, Verdict{Action: Reset, Trigger: "/new", Model: "minimax", Answer: "New session started with minimax."}},
	} {
		if got := Decide(c.m, c.control, c.offered); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
