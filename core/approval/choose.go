package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

// claude's own questions (AskUserQuestion, runner.AskUserQuestion) are
// asked in the turn's chat, one after the other: each with its options
// as buttons where the channel has them — toggles and a Done button when
// several may be picked (multiSelect) — and numbered in the text
// everywhere, so a typed "2" or "1, 3" answers too, as do an option's
// label or the person's own words. Who answers: the person whose message
// started the turn, and owners (a scheduled turn's: owners only); anyone
// else pressing is told who may. The answers go back as the tool's
// allowed input with "answers" set (question → label; a multi-select's
// labels joined with ", "), which claude 2.1.330 gives the model as the tool's
// result ("Your questions have been answered: …"). A question nobody
// answers within the timeout is left unanswered, with the ones after it:
// claude gets the answers so far and, for the rest, the annotation
// unanswered = "skipped" (its capability ask_user_question_unanswered_v1),
// and reads "The user did not answer the questions." when none was
// answered; the turn goes on.

const (
	choicePrefix = "aq:"
	// doneVerb is the Done button of a multi-select question.
	doneVerb = "done"
)

// choiceInput is AskUserQuestion's input.
type choiceInput struct {
	Questions []struct {
		Question    string `json:"question"`
		Header      string `json:"header"`
		MultiSelect bool   `json:"multiSelect"`
		Options     []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

// clean is text the model wrote, visible and cut for a question.
func clean(s string) string { return cut(visible(s), summaryLen, summaryLines) }

// choose asks the chat claude's questions and answers with what was
// picked (see above).
func (a *Approvals) choose(ctx context.Context, q Question) Outcome {
	cfg := a.config()
	var in choiceInput
	var raw map[string]any
	if json.Unmarshal(q.Request.Input, &in) != nil || json.Unmarshal(q.Request.Input, &raw) != nil || len(in.Questions) == 0 {
		return Outcome{Decision: runner.Decision{Message: "The questions could not be read, so they were not asked."}, By: "unreadable"}
	}
	answers, annotations := map[string]any{}, map[string]any{}
	var by []string
	skipped := false
	for _, cq := range in.Questions {
		if skipped {
			annotations[cq.Question] = map[string]any{"unanswered": "skipped"}
			continue
		}
		qu := &question{id: newID(), q: q, summary: clean(cq.Question), since: a.now(), answers: make(chan verdict, 1), multi: cq.MultiSelect,
			ownersOnly: cfg.OwnersOnly}
		var b strings.Builder
		fmt.Fprintf(&b, "claude asks: %s\n", clean(cq.Question))
		for i, o := range cq.Options {
			qu.choices = append(qu.choices, o.Label)
			fmt.Fprintf(&b, "%d. %s", i+1, clean(o.Label))
			if o.Description != "" {
				fmt.Fprintf(&b, " — %s", clean(o.Description))
			}
			b.WriteString("\n")
		}
		buttons := a.out.HasButtons(q.Target.Instance)
		switch {
		case buttons && cq.MultiSelect:
			b.WriteString("Press the ones you pick, then Done — or reply with their numbers (1, 3) or in your own words.")
		case buttons:
			b.WriteString("Press one, or reply in your own words.")
		case cq.MultiSelect:
			b.WriteString("Reply with one or more numbers (1, 3) or in your own words.")
		default:
			b.WriteString("Reply with a number or in your own words.")
		}
		fmt.Fprintf(&b, " No answer in %s skips it.", spoken.Precise(cfg.Timeout))
		qu.ctext, qu.picked = b.String(), make([]bool, len(qu.choices))
		a.mu.Lock()
		a.open[qu.id] = qu
		qu.targets = []message.Target{q.Target} // before the send (see Ask)
		rows := qu.choiceRows()
		a.mu.Unlock()
		ids := a.out.SendButtons(q.Key, q.Target, qu.ctext, channel.FormatPlain, rows)
		if len(ids) > 0 {
			a.mu.Lock()
			qu.asked = []sentTo{{q.Target, ids[len(ids)-1]}}
			unshown := qu.unshown
			qu.unshown, rows = false, qu.choiceRows()
			a.mu.Unlock()
			if unshown { // pressed before the message could be edited
				a.out.EditButtons(q.Target, ids[len(ids)-1], qu.ctext, rows)
			}
		}
		v, o, ok := a.await(ctx, qu, ids, cfg)
		a.mu.Lock()
		delete(a.open, qu.id)
		a.mu.Unlock()
		if len(ids) > 0 {
			a.out.EditText(q.Target, ids[len(ids)-1], qu.choiceResult(v, o, ok, cfg))
		}
		switch {
		case ok && v.picked != nil:
			// The form claude's own card answers a multi-select in (an
			// array reaches the model joined with bare commas).
			answers[cq.Question] = strings.Join(v.picked, ", ")
			by = append(by, v.by)
		case ok:
			answers[cq.Question] = v.text
			by = append(by, v.by)
		case o.By == "timeout":
			skipped = true
			annotations[cq.Question] = map[string]any{"unanswered": "skipped"}
		default:
			return a.decided(qu, o)
		}
	}
	raw["answers"] = answers
	if len(annotations) > 0 {
		raw["annotations"] = annotations
	}
	updated, _ := json.Marshal(raw)
	o := Outcome{Decision: runner.Decision{Allow: true, UpdatedInput: updated}, By: strings.Join(by, ", ")}
	if skipped && len(by) == 0 {
		o.By = "timeout"
	}
	a.log.Info("question answered", "session", q.Key.String(), "questions", len(in.Questions), "answered", len(answers), "by", o.By)
	return o
}

// choiceRows are a choice question's buttons (a.mu held): one per
// option, and for a multi-select the options as toggles (☑ picked, ☐ not)
// and Done.
func (qu *question) choiceRows() [][]channel.Button {
	var rows [][]channel.Button
	for i, c := range qu.choices {
		text := clean(c)
		if qu.multi {
			text = map[bool]string{true: "☑ ", false: "☐ "}[qu.picked[i]] + text
		}
		rows = append(rows, []channel.Button{{ID: choicePrefix + qu.id + ":" + strconv.Itoa(i), Label: label(text, 40)}})
	}
	if qu.multi {
		rows = append(rows, []channel.Button{{ID: choicePrefix + qu.id + ":" + doneVerb, Label: "Done"}})
	}
	return rows
}

// choiceResult replaces a choice question once it ended.
func (qu *question) choiceResult(v verdict, o Outcome, ok bool, cfg Config) string {
	end := "❓ " + qu.summary + "\n"
	switch {
	case ok && v.picked != nil:
		return end + "→ " + clean(strings.Join(v.picked, ", ")) + " (" + v.by + ")"
	case ok:
		return end + "→ " + clean(v.text) + " (" + v.by + ")"
	case o.By == "timeout":
		return end + "No answer within " + spoken.Precise(cfg.Timeout) + ": claude goes on without it."
	}
	return end + "(Question withdrawn: the turn ended.)"
}

// press answers a press of a choice question's button rest (an option's
// index, or doneVerb): a single choice is the answer; a multi-select's
// option toggles (the message is edited to show it) and Done answers with
// the options picked. reply is said to the presser.
func (a *Approvals) press(qu *question, rest, by, byID string) (reply string) {
	if rest == doneVerb && qu.multi {
		a.mu.Lock()
		var picked []string
		for i, p := range qu.picked {
			if p {
				picked = append(picked, qu.choices[i])
			}
		}
		a.mu.Unlock()
		if len(picked) == 0 {
			return "Pick at least one, then press Done."
		}
		qu.give(verdict{picked: picked, by: by, byID: byID})
		return ""
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= len(qu.choices) {
		return "That answer is not one of the buttons."
	}
	if !qu.multi {
		qu.give(verdict{text: qu.choices[i], by: by, byID: byID})
		return ""
	}
	a.mu.Lock()
	qu.picked[i] = !qu.picked[i]
	rows, text := qu.choiceRows(), qu.ctext
	var sent []sentTo
	sent = append(sent, qu.asked...)
	qu.unshown = len(sent) == 0 // still being sent: its end shows the toggle
	a.mu.Unlock()
	for _, s := range sent {
		a.out.EditButtons(s.tgt, s.id, text, rows)
	}
	return ""
}

// await waits for the answer to a choice question.
func (a *Approvals) await(ctx context.Context, qu *question, ids []string, cfg Config) (verdict, Outcome, bool) {
	if len(ids) == 0 {
		return verdict{}, Outcome{Decision: runner.Decision{Message: "The question could not be sent to the user."}, By: "undeliverable"}, false
	}
	select {
	case v := <-qu.answers:
		return v, Outcome{}, true
	case <-a.after(cfg.Timeout):
		return verdict{}, Outcome{By: "timeout"}, false
	case <-qu.q.Request.Withdrawn:
	case <-ctx.Done():
	}
	return verdict{}, Outcome{By: "withdrawn"}, false
}

// pick reads a typed answer to a choice question: option numbers (several,
// for a multi-select: picked), an option's label, or the person's own
// words (text).
func (qu *question) pick(text string) (answer string, picked []string) {
	text = strings.TrimSpace(text)
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(qu.choices) {
			picked = nil
			break
		}
		if !slices.Contains(picked, qu.choices[n-1]) {
			picked = append(picked, qu.choices[n-1])
		}
	}
	switch {
	case len(picked) == 1 && !qu.multi:
		return picked[0], nil
	case len(picked) >= 1 && qu.multi:
		return "", picked
	}
	for _, c := range qu.choices {
		if strings.EqualFold(c, text) {
			if qu.multi {
				return "", []string{c}
			}
			return c, nil
		}
	}
	return text, nil
}
