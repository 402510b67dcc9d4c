package sessionreset

import "strings"

// Action is what a reset trigger does to an arriving message.
type Action int

// Actions.
const (
	// NoReset: the message is no reset trigger; it goes on.
	NoReset Action = iota
	// Refuse: a trigger from a member who may not control the session;
	// Verdict.Answer tells them, and nothing else happens.
	Refuse
	// Reset: the session starts anew (Verdict.Trigger names why). With
	// Verdict.Model the new session runs on that model; with
	// Verdict.Answer the chat is told and the message is done; otherwise
	// the message's payload becomes the new session's first message (the
	// turn strips the trigger and the model word again).
	Reset
)

// Verdict is the reset stage's decision for one message.
type Verdict struct {
	Action  Action
	Trigger string
	Model   string
	Answer  string
}

// Decide is the reset stage, beside admission: what the trigger match m
// of an arriving message does, the sender controlling the session or not
// (control), and offered the models the session's agent offers
// (agent.models; "/new sonnet" picks one: ModelHint).
func Decide(m TriggerMatch, control bool, offered []string) Verdict {
	switch {
	case !m.Triggered:
		return Verdict{}
	case !control:
		return Verdict{Action: Refuse, Answer: "In this group only an owner can start a new session."}
	}
	v := Verdict{Action: Reset, Trigger: m.Trigger}
	payload := m.Payload
	if model, rest, ok := ModelHint(payload, offered); ok {
		v.Model, payload = model, rest
		if rest == "" {
			v.Answer = "New session started with " + model + "."
			return v
		}
	}
	if strings.TrimSpace(payload) == "" {
		v.Answer = "New session started."
	}
	return v
}

// aliases are the model names /new takes as a model hint when agent.models
// is not set (claude's own aliases); a full id starting "claude-" too.
var aliases = []string{"opus", "sonnet", "haiku"}

// ModelHint reads a model hint at the start of a reset's text (the
// seed's "/new <model> text"): the first word names a model when
// agent.models (offered) lists it, or, with no list, when it is one of
// claude's aliases or a "claude-" id. rest is the text after it.
func ModelHint(text string, offered []string) (model, rest string, ok bool) {
	text = strings.TrimSpace(text)
	word, after, _ := strings.Cut(text, " ")
	if word == "" {
		return "", text, false
	}
	match := func(list []string) (string, bool) {
		for _, m := range list {
			if strings.EqualFold(m, word) {
				return m, true
			}
		}
		return "", false
	}
	if len(offered) > 0 {
		model, ok = match(offered)
	} else if model, ok = match(aliases); !ok && strings.HasPrefix(strings.ToLower(word), "claude-") {
		model, ok = strings.ToLower(word), true
	}
	if !ok {
		return "", text, false
	}
	return model, strings.TrimSpace(after), true
}
